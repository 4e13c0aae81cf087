package spark

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"

	"github.com/tidemark-etl/tidemark/engine"
)

// unclosedQuote finds a CSV line of r whose last field opens a quote that
// the line does not close, and returns it as an *engine.InputError (nil
// when no line has one). Spark reads CSV a line at a time: such a line is
// read as if the quote were closed at its end, a field that spans lines
// is cut there (with skip or quarantine the rest is a bad record and the
// cut value is kept) and an unterminated quote is taken as a value. The
// DuckDB engine fails the run on an unterminated quote and reads quoted
// fields across lines; here both fail it, naming the line.
func (x *execution) unclosedQuote(ctx context.Context, r *reader) (*engine.InputError, error) {
	re := openQuoteRE(r.opts)
	if re == "" || len(r.paths) == 0 {
		return nil, nil
	}
	cond := ""
	if c := r.opts["comment"]; c != "" {
		cond = fmt.Sprintf(" AND NOT startswith(value, CAST(X'%s' AS STRING))", hex.EncodeToString([]byte(c)))
	}
	// Only a line with a quote can open one: the cheap test first, so
	// that the expression runs on those lines alone.
	rows, ie, err := x.scanLines(ctx, r, "checking quotes", func(lines string) string {
		return fmt.Sprintf("SELECT %s, value FROM %s WHERE instr(value, CAST(X'%s' AS STRING)) > 0 AND value RLIKE CAST(X'%s' AS STRING)%s LIMIT 1",
			fileCol, lines, hex.EncodeToString([]byte(quoteOf(r.opts))), hex.EncodeToString([]byte(re)), cond)
	})
	if ie != nil || err != nil {
		return ie, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	file, _ := rows[0][0].(string)
	line, _ := rows[0][1].(string)
	return &engine.InputError{Source: r.src.Ctx, File: r.key(file), Line: x.lineOf(ctx, file, line),
		Msg: "a quote opened on this line is not closed on it (the spark engine reads no quoted field that spans lines); " +
			"fix the quote (or set quote: '' if the file does not quote): " + clip(line)}, nil
}

// scanLines runs the query that query makes of the view of r's files read
// as text lines (with fileCol), then drops the view. A file Spark cannot
// read at all comes back as an *engine.InputError naming it; doing says,
// in other errors, what was being done.
func (x *execution) scanLines(ctx context.Context, r *reader, doing string, query func(lines string) string) ([][]any, *engine.InputError, error) {
	name := quoteIdent(fmt.Sprintf("_tidemark_lines_%d", r.n))
	if err := x.createRead(ctx, name, "text", "", map[string]string{}, r.paths, true); err != nil {
		return nil, nil, x.e.wrapErr(ctx, err, "source %s: %s", r.src.Ctx, doing)
	}
	rows, err := x.queryRows(ctx, query(name))
	if err != nil {
		err = x.e.wrapErr(ctx, err, "source %s: %s", r.src.Ctx, doing)
		var se *Error
		if errors.As(err, &se) && ctx.Err() == nil {
			if ie := r.unreadable(se); ie != nil {
				return nil, ie, nil
			}
		}
		return nil, nil, err
	}
	if err := x.sql(ctx, "DROP VIEW IF EXISTS "+name, "source %s: %s", r.src.Ctx, doing); err != nil {
		return nil, nil, err
	}
	return rows, nil, nil
}

// quoteOf is the quote character of Spark's CSV options opts.
func quoteOf(opts map[string]string) string {
	if q, ok := opts["quote"]; ok {
		return q
	}
	return `"`
}

// openQuoteRE is a Java regular expression matching a CSV line (Spark's
// options opts) whose fields, read from the start, end in a quoted field
// that is not closed; "" when it cannot be said (no quoting, a delimiter
// or quote of more than one character). Quantifiers are possessive and
// repeat per escape or field, not per character, so long lines do not
// exhaust the regex engine's stack.
func openQuoteRE(opts map[string]string) string {
	d, q, e := opts["sep"], quoteOf(opts), opts["escape"]
	if d == "" {
		d = ","
	}
	if e == "" {
		e = `\`
	}
	if len([]rune(d)) != 1 || len([]rune(q)) != 1 || len([]rune(e)) != 1 {
		return ""
	}
	D, Q, E := regexp.QuoteMeta(d), regexp.QuoteMeta(q), regexp.QuoteMeta(e)
	var inner string
	if e == q {
		inner = fmt.Sprintf(`[^%[1]s]*+(?:%[1]s%[1]s[^%[1]s]*+)*+`, Q)
	} else {
		inner = fmt.Sprintf(`[^%[1]s%[2]s]*+(?:%[2]s.[^%[1]s%[2]s]*+)*+`, Q, E)
	}
	field := fmt.Sprintf(`(?:%[2]s%[3]s%[2]s[^%[1]s]*+|[^%[2]s%[1]s][^%[1]s]*+)?`, D, Q, inner)
	return fmt.Sprintf(`^(?:%[1]s%[2]s)*+%[3]s%[4]s$`, field, D, Q, inner)
}
