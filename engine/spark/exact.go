package spark

import (
	"context"
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// keepExact retypes as VARCHAR the DOUBLE columns a first run inferred
// from CSV whose sampled values a DOUBLE would change, as the DuckDB
// engine does: Spark typed 0.12345678901234567890 (or 12345678901234567890
// beside 1.5) as double and wrote 0.12345678901234568, exit 0. A value is
// changed when it has more than 17 significant digits, or more than 15 and
// a decimal value other than the double's text. One query over the sample
// read as text, only when a DOUBLE column was inferred.
func (x *execution) keepExact(ctx context.Context, r *reader, cols []bookmark.Column, opts map[string]string, paths []string) error {
	var doubles []int
	for i, c := range cols {
		if c.Type == "DOUBLE" {
			doubles = append(doubles, i)
		}
	}
	if len(doubles) == 0 {
		return nil
	}
	text := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		text[i] = bookmark.Column{Name: c.Name, Type: "VARCHAR"}
	}
	ddl, err := schemaDDL(text)
	if err != nil {
		return fmt.Errorf("source %s: %w", r.src.Ctx, err)
	}
	opts = copyOpts(opts)
	delete(opts, "inferSchema")
	delete(opts, "samplingRatio")
	opts["mode"] = "PERMISSIVE"
	name := quoteIdent(fmt.Sprintf("_tidemark_exact_%d", r.n))
	if err := x.createRead(ctx, name, r.src.Format, ddl, opts, paths, false); err != nil {
		return x.e.wrapErr(ctx, err, "source %s: inferring the schema", r.src.Ctx)
	}
	var sel []string
	for _, i := range doubles {
		v := fmt.Sprintf("trim(%s)", quoteIdent(cols[i].Name))
		digits := fmt.Sprintf(`length(regexp_replace(regexp_replace(regexp_replace(regexp_extract(%s, '^[+-]?([0-9]*[.]?[0-9]*)', 1), '[.]', ''), '^0+', ''), '0+$', ''))`, v)
		changed := fmt.Sprintf(`(%[2]s > 17 OR (%[2]s > 15 AND NOT (try_cast(%[1]s AS DECIMAL(38,20)) <=> try_cast(CAST(try_cast(%[1]s AS DOUBLE) AS STRING) AS DECIMAL(38,20)))))`, v, digits)
		sel = append(sel, fmt.Sprintf("max(CASE WHEN %s THEN 1 ELSE 0 END)", changed))
	}
	rows, err := x.queryRows(ctx, fmt.Sprintf("SELECT %s FROM %s", strings.Join(sel, ", "), name))
	if err != nil {
		return x.e.wrapErr(ctx, err, "source %s: inferring the schema", r.src.Ctx)
	}
	if len(rows) == 1 {
		for j, i := range doubles {
			if n, ok := rows[0][j].(int32); ok && n == 1 {
				cols[i].Type = "VARCHAR"
			} else if n, ok := rows[0][j].(int64); ok && n == 1 {
				cols[i].Type = "VARCHAR"
			}
		}
	}
	return x.sql(ctx, "DROP VIEW IF EXISTS "+name, "source %s: inferring the schema", r.src.Ctx)
}
