package spark

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// Spark's CSV and JSON readers read a number past a DOUBLE's or FLOAT's
// range (1e400) as infinity, with no error: the value was changed and the
// run succeeded. Under the fail policy such a value is a bad record, as in
// the DuckDB engine: a source with DOUBLE or FLOAT columns is read once
// more with those columns as text, and the first value that is a finite
// number past the range (an exponent or more than 38 digits, and infinity
// as the type) fails the run naming file, line and column. An infinity
// spelled out stays one.

// floatColumns are the DOUBLE and FLOAT columns of r's schema that the
// check reads, none for a source it does not apply to.
func (r *reader) floatColumns() []bookmark.Column {
	if r.src.Exact || (r.src.Format != "csv" && r.src.Format != "json") || len(r.paths) == 0 {
		return nil
	}
	var out []bookmark.Column
	for _, c := range r.schema {
		if t, err := bookmark.ParseType(c.Type); err == nil && (t.Kind == bookmark.Double || t.Kind == bookmark.Float) {
			out = append(out, c)
		}
	}
	return out
}

// floatOutOfRange returns the first value of r past its column's range as
// an *engine.InputError, or nil when there is none.
func (x *execution) floatOutOfRange(ctx context.Context, r *reader) (*engine.InputError, error) {
	floats := r.floatColumns()
	if len(floats) == 0 {
		return nil, nil
	}
	text := make([]bookmark.Column, len(r.schema))
	isFloat := map[string]string{}
	for _, c := range floats {
		isFloat[c.Name] = c.Type
	}
	for i, c := range r.schema {
		text[i] = bookmark.Column{Name: c.Name, Type: "VARCHAR"}
	}
	ddl, err := schemaDDL(text)
	if err != nil {
		return nil, err
	}
	opts := copyOpts(r.opts)
	opts["mode"] = "PERMISSIVE" // a malformed record is the main read's to report
	name := quoteIdent(fmt.Sprintf("_tidemark_floats_%d", r.n))
	if err := x.createRead(ctx, name, r.src.Format, ddl, opts, r.paths, true); err != nil {
		return nil, x.wrap(ctx, err, "source %s: checking the range of numbers", r.src.Ctx)
	}
	var parts []string
	for _, c := range floats {
		q := quoteIdent(c.Name)
		st := "DOUBLE"
		if strings.EqualFold(c.Type, "FLOAT") {
			st = "FLOAT"
		}
		parts = append(parts, fmt.Sprintf("SELECT %s AS file, %s AS col, %s AS v FROM %s WHERE (contains(%s, 'e') OR contains(%s, 'E') OR length(%s) > 38) "+
			"AND abs(try_cast(trim(%s) AS %s)) = CAST('Infinity' AS %s)", fileCol, stringLit(c.Name), q, name, q, q, q, q, st, st))
	}
	rows, err := x.queryRows(ctx, strings.Join(parts, " UNION ALL ")+" LIMIT 1")
	if err != nil {
		return nil, x.wrap(ctx, err, "source %s: checking the range of numbers", r.src.Ctx)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	file, _ := rows[0][0].(string)
	col, _ := rows[0][1].(string)
	v, _ := rows[0][2].(string)
	return &engine.InputError{Source: r.src.Ctx, File: r.key(file), Line: x.lineHolding(ctx, file, v), Column: col,
		Msg: fmt.Sprintf("value %s is out of %s's range, and would be read as infinity", clip(v), isFloat[col])}, nil
}

// lineHolding is the first line of file that holds s (1-based, 0 when not
// found).
func (x *execution) lineHolding(ctx context.Context, file, s string) int64 {
	q := fmt.Sprintf("SELECT min(n) FROM (SELECT value, row_number() OVER (ORDER BY monotonically_increasing_id()) AS n FROM text.%s) WHERE contains(value, CAST(X'%s' AS STRING))",
		quoteIdent(escapeGlob(file)), hex.EncodeToString([]byte(s)))
	n, err := x.count(ctx, q)
	if err != nil {
		return 0
	}
	return n
}
