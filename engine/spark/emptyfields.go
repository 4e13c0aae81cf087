package spark

import (
	"context"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/tidemark-etl/tidemark/engine"
)

// emptyUnderNullstr finds a CSV line of r with an empty unquoted field
// when the source names a nullstr other than the empty text, and returns
// it as an *engine.InputError (nil when no line has one). Spark's parser
// reads such a field as its nullValue, so as NULL; the DuckDB engine reads
// it as the empty text, or as a bad record in a column of another type.
// Spark was given the file's NULL as a value with exit 0 (3;; read as
// 3, NULL, NULL under nullstr: N/A); here the run fails under every
// on_bad_record, naming the line.
func (x *execution) emptyUnderNullstr(ctx context.Context, r *reader) (*engine.InputError, error) {
	if r.opts["nullValue"] == "" || len(r.paths) == 0 {
		return nil, nil
	}
	re := emptyFieldRE(r.opts)
	if re == "" {
		return nil, nil
	}
	rows, ie, err := x.scanLines(ctx, r, "checking empty fields", func(lines string) string {
		return fmt.Sprintf("SELECT %s, value FROM %s WHERE value <> '' AND value RLIKE CAST(X'%s' AS STRING) LIMIT 1",
			fileCol, lines, hex.EncodeToString([]byte(re)))
	})
	if ie != nil || err != nil || len(rows) == 0 {
		return ie, err
	}
	file, _ := rows[0][0].(string)
	line, _ := rows[0][1].(string)
	return &engine.InputError{Source: r.src.Ctx, File: r.key(file), Line: x.lineOf(ctx, file, line),
		Msg: fmt.Sprintf("the line has an empty field, which the spark engine reads as NULL under nullstr %q (the duckdb engine "+
			"reads an empty text, or a bad record in a column of another type); write the field as %q, or quote the empty text: %s",
			r.opts["nullValue"], r.opts["nullValue"], clip(line))}, nil
}

// emptyFieldRE is a Java regular expression matching a CSV line (Spark's
// options opts) with an empty unquoted field; "" when it cannot be said
// (a delimiter, quote or escape of more than one character).
func emptyFieldRE(opts map[string]string) string {
	d, q, e := opts["sep"], quoteOf(opts), opts["escape"]
	if d == "" {
		d = ","
	}
	if e == "" {
		e = `\`
	}
	if len([]rune(d)) != 1 || len([]rune(e)) != 1 || len([]rune(q)) > 1 {
		return ""
	}
	D := regexp.QuoteMeta(d)
	if q == "" {
		return fmt.Sprintf(`^(?:[^%[1]s]++%[1]s)*+(?:%[1]s|$)`, D)
	}
	Q, E := regexp.QuoteMeta(q), regexp.QuoteMeta(e)
	var inner string
	if e == q {
		inner = fmt.Sprintf(`[^%[1]s]*+(?:%[1]s%[1]s[^%[1]s]*+)*+`, Q)
	} else {
		inner = fmt.Sprintf(`[^%[1]s%[2]s]*+(?:%[2]s.[^%[1]s%[2]s]*+)*+`, Q, E)
	}
	field := fmt.Sprintf(`(?:%[2]s%[3]s%[2]s[^%[1]s]*+|[^%[2]s%[1]s][^%[1]s]*+)`, D, Q, inner)
	return fmt.Sprintf(`^(?:%[1]s%[2]s)*+(?:%[2]s|$)`, field, D)
}
