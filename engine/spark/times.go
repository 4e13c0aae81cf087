package spark

import (
	"context"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// fractionDigits is how many fractional second digits a timestamp column
// keeps, by its recorded type: Spark's timestamps keep microseconds, and
// the second and millisecond kinds keep fewer, as the DuckDB engine checks
// them.
var fractionDigits = map[bookmark.Kind]int{
	bookmark.Timestamp: 6, bookmark.TimestampTZ: 6, bookmark.TimestampNS: 6,
	bookmark.TimestampMS: 3, bookmark.TimestampS: 0,
}

// cutFraction finds a value of a timestamp column of r's CSV or JSON
// files with a non-zero fractional second digit past what the column
// keeps (2026-01-02 10:00:00.1234567) and returns it as an
// *engine.InputError naming file, line and column (nil when there is
// none). Spark's parser cuts such a value without a word; the DuckDB
// engine takes it for a bad record. One pass over the files as text finds
// whether any line has such a fraction; only then are the files read with
// those columns as text, to name the column, so that a text column that
// holds one fails nothing.
func (x *execution) cutFraction(ctx context.Context, r *reader) (*engine.InputError, error) {
	if r.src.Format == "parquet" || r.src.Exact || len(r.paths) == 0 {
		return nil, nil
	}
	if _, ok := r.opts["timestampFormat"]; ok {
		return nil, nil // the job's pattern: Spark parses it strictly
	}
	hive := hiveNames(r.src)
	digits := map[string]int{}
	least := 6
	textSchema := make([]bookmark.Column, len(r.schema))
	for i, c := range r.schema {
		textSchema[i] = c
		t, err := bookmark.ParseType(c.Type)
		if err != nil || hive[strings.ToLower(c.Name)] {
			continue
		}
		if n, ok := fractionDigits[t.Kind]; ok {
			digits[c.Name] = n
			least = min(least, n)
			textSchema[i].Type = "VARCHAR"
		}
	}
	if len(digits) == 0 {
		return nil, nil
	}
	rows, ie, err := x.scanLines(ctx, r, "checking timestamps", func(lines string) string {
		return fmt.Sprintf("SELECT %s FROM %s WHERE value RLIKE %s LIMIT 1", fileCol, lines, hexString(cutRE(least)))
	})
	if ie != nil || err != nil || len(rows) == 0 {
		return ie, err
	}
	ddl, err := schemaDDL(textSchema)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", r.src.Ctx, err)
	}
	name := fmt.Sprintf("_tidemark_times_%d", r.n)
	opts := copyOpts(r.opts)
	opts["mode"] = "PERMISSIVE"
	if err := x.createRead(ctx, name, r.src.Format, ddl, opts, r.paths, true); err != nil {
		return nil, x.e.wrapErr(ctx, err, "source %s: checking timestamps", r.src.Ctx)
	}
	var parts []string
	for _, c := range r.schema {
		if n, ok := digits[c.Name]; ok {
			parts = append(parts, fmt.Sprintf("SELECT %s AS f, %s AS c, %s AS v FROM %s WHERE %s RLIKE %s",
				fileCol, hexString(c.Name), quoteIdent(c.Name), quoteIdent(name), quoteIdent(c.Name), hexString(cutRE(n))))
		}
	}
	rows, err = x.queryRows(ctx, strings.Join(parts, " UNION ALL ")+" ORDER BY f LIMIT 1")
	if err != nil {
		return nil, x.e.wrapErr(ctx, err, "source %s: checking timestamps", r.src.Ctx)
	}
	if err := x.sql(ctx, "DROP VIEW IF EXISTS "+quoteIdent(name), "source %s: checking timestamps", r.src.Ctx); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	file, _ := rows[0][0].(string)
	col, _ := rows[0][1].(string)
	v, _ := rows[0][2].(string)
	return &engine.InputError{Source: r.src.Ctx, File: r.key(file), Line: x.lineWith(ctx, file, v), Column: col,
		Msg: fmt.Sprintf("value %q does not convert to the column's type %s without loss: it has fractional second digits "+
			"past the %d the type keeps, which would be cut", v, typeOf(r.schema, col), digits[col])}, nil
}

// cutRE matches a time of day with a non-zero fractional second digit
// past the first n.
func cutRE(n int) string {
	return fmt.Sprintf(`[0-9]:[0-9]{2}[.,][0-9]{%d}[0-9]*[1-9]`, n)
}

func typeOf(cols []bookmark.Column, name string) string {
	for _, c := range cols {
		if c.Name == name {
			return c.Type
		}
	}
	return ""
}

// lineWith finds the first line of file that holds the text v (1-based, 0
// when none does).
func (x *execution) lineWith(ctx context.Context, file, v string) int64 {
	q := fmt.Sprintf("SELECT min(n) FROM (SELECT value, row_number() OVER (ORDER BY monotonically_increasing_id()) AS n FROM text.%s) WHERE instr(value, %s) > 0",
		quoteIdent(escapeGlob(file)), hexString(v))
	n, err := x.count(ctx, q)
	if err != nil {
		return 0
	}
	return n
}
