package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// keepExact retypes the CSV columns DuckDB's inference made DOUBLE whose
// sampled text a DOUBLE would change, so that a first run keeps every
// value as written: DuckDB reads 12345678901234567890 (past BIGINT) as
// DOUBLE and writes 1.2345678901234567e+19 (and 42 as 42.0). A column of
// integers only becomes DECIMAL(p,0), p its longest value's digits, as
// Spark infers it (decimal(20,0)); past 38 digits, or beside a fraction
// with more significant digits than a DOUBLE keeps
// (0.12345678901234567890), it is VARCHAR. Columns pinned with the types
// option are left alone. query is the inference's read of the sample,
// with all_varchar added here.
func (r *reader) keepExact(ctx context.Context, c *sql.Conn, q string) error {
	pinned := map[string]bool{}
	if o, ok := r.opts["types"]; ok {
		if m, ok := o.value.([][2]string); ok {
			for _, kv := range m {
				pinned[strings.ToLower(kv[0])] = true
			}
		}
	}
	var cols []int
	var aggs []string
	for i, col := range r.data {
		if col.Type != "DOUBLE" || pinned[strings.ToLower(col.Name)] {
			continue
		}
		v := fmt.Sprintf("nullif(trim(%s), '')", ident(col.Name))
		whole := fmt.Sprintf(`regexp_full_match(%s, '[+-]?[0-9]+')`, v)
		// sig is the significant digits of a number's text; a DOUBLE keeps
		// the value when its shortest text has the same ones.
		sig := func(x string) string {
			return fmt.Sprintf(`rtrim(ltrim(regexp_replace(split_part(lower(%s), 'e', 1), '[^0-9]', '', 'g'), '0'), '0')`, x)
		}
		lost := fmt.Sprintf(`(length(%[1]s) > 15 AND %[1]s IS DISTINCT FROM %[2]s)`, sig(v), sig(fmt.Sprintf("TRY_CAST(%s AS DOUBLE)::VARCHAR", v)))
		aggs = append(aggs,
			fmt.Sprintf("coalesce(bool_and(%s) FILTER (WHERE %s IS NOT NULL), false)", whole, v),
			fmt.Sprintf("coalesce(max(length(ltrim(ltrim(%s, '+-'), '0'))), 0)", v),
			fmt.Sprintf("coalesce(bool_or(%s), false)", lost))
		cols = append(cols, i)
	}
	if len(cols) == 0 {
		return nil
	}
	q = strings.TrimSuffix(q, ")") + ", all_varchar=true)"
	out := make([]any, len(aggs))
	vals := make([]struct {
		whole, lost bool
		digits      int64
	}, len(cols))
	for k := range cols {
		out[3*k], out[3*k+1], out[3*k+2] = &vals[k].whole, &vals[k].digits, &vals[k].lost
	}
	if err := c.QueryRowContext(ctx, fmt.Sprintf("SELECT %s FROM (%s)", strings.Join(aggs, ", "), q)).Scan(out...); err != nil {
		return wrap(ctx, err, []*reader{r}, "source %s: checking inferred DOUBLE columns", r.src.Ctx)
	}
	for k, i := range cols {
		switch v := vals[k]; {
		case v.whole && v.digits <= 38:
			r.data[i].Type = fmt.Sprintf("DECIMAL(%d,0)", max(v.digits, 1))
		case v.whole || v.lost:
			r.data[i].Type = "VARCHAR"
		}
	}
	return nil
}
