package duckdb

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// The projection of one chunk under an evolving mode. A schema column the
// chunk's files lack is NULL of its type. Under rescue every file column
// other than VARCHAR (and nested JSON ones) is read as text and converted
// here, NULL when it does not fit; the rescued column collects, per row,
// the text of those values and of the columns the schema lacks, with the
// file's key:
//
//	CASE WHEN <a value does not fit, or a new column has one>
//	THEN to_json(map_from_entries(list_filter([{k, v}, ...], e -> e.v IS NOT NULL) || {'k': '_file', 'v': key}))
//
// so a row with nothing to rescue has NULL there. Whether a CSV or JSON
// value fits is computed once per value, in the read under the projection
// (fitColumns).

// rescuable reports whether a file column is read as text under rescue.
func (r *reader) rescuable(col bookmark.Column) bool {
	if strings.EqualFold(col.Type, "VARCHAR") {
		return false
	}
	t, err := modelType(col.Type)
	if err != nil {
		return false
	}
	if r.src.Format == "json" {
		return !t.Nested() && t.Kind != bookmark.Other && t.Kind != bookmark.JSON
	}
	return r.src.Format == "csv"
}

// chunkColumns maps a chunk's column names (lowercase) to its columns.
func chunkColumns(ch *readChunk) map[string]bookmark.Column {
	m := make(map[string]bookmark.Column, len(ch.cols))
	for _, c := range ch.cols {
		m[strings.ToLower(c.Name)] = c
	}
	return m
}

// evolvedList is the projection of chunk ch in schema order under an
// evolving mode (see the comment at the top); keep as for selectList.
func (r *reader) evolvedList(ch *readChunk, keep bool) string {
	have := chunkColumns(ch)
	isHive := map[string]bool{}
	for _, h := range r.hive {
		isHive[strings.ToLower(h.Name)] = true
	}
	var parts, bad, rescued, conds []string
	for _, col := range r.schema() {
		l := strings.ToLower(col.Name)
		got, ok := have[l]
		switch {
		case isHive[l]:
			parts = append(parts, ident(col.Name))
		case !ok:
			typ := col.Type
			if keep && r.checked[col.Name] != nil {
				typ = r.textType()
			}
			parts = append(parts, fmt.Sprintf("CAST(NULL AS %s) AS %s", typ, ident(col.Name)))
		case r.src.Format == "parquet":
			expr, resc := r.parquetColumn(col, got)
			parts = append(parts, expr)
			if resc != "" {
				rescued = append(rescued, rescueEntry(col.Name, resc))
				conds = append(conds, "("+resc+") IS NOT NULL")
			}
		case r.rescuing() && r.rescuable(col):
			// fitColumns computed whether the value fits, once.
			t, _ := r.textOf(col.Name)
			f := ident(fitColumn(col.Name))
			parts = append(parts, fmt.Sprintf("CASE WHEN %s THEN %s END AS %s", f, r.convertText(t, col.Type), ident(col.Name)))
			rescued = append(rescued, rescueEntry(col.Name, fmt.Sprintf("CASE WHEN NOT %s THEN coalesce(%s, %s::VARCHAR) END", f, t, ident(col.Name))))
			conds = append(conds, "NOT "+f)
		default:
			expr, b := r.columnExpr(col, keep)
			parts = append(parts, expr)
			if b != "" {
				bad = append(bad, b)
			}
		}
	}
	if r.rescuing() {
		known := r.dataIndex()
		for _, c := range ch.cols {
			if _, ok := known[strings.ToLower(c.Name)]; ok || isHive[strings.ToLower(c.Name)] {
				continue
			}
			v := ident(c.Name) + "::VARCHAR"
			t, present := r.textOf(c.Name)
			if r.src.Format == "json" {
				v = fmt.Sprintf("CASE WHEN %s THEN coalesce(%s, %s::VARCHAR) END", present, t, ident(c.Name))
			}
			rescued = append(rescued, rescueEntry(c.Name, v))
			conds = append(conds, present)
		}
		parts = append(parts, r.rescuedSQL(ch, rescued, conds))
	}
	if keep {
		parts = append(parts, "CASE "+strings.Join(bad, " ")+" END AS "+ident(badColumn), ident(fileColumn))
		if len(bad) == 0 {
			parts[len(parts)-2] = "CAST(NULL AS VARCHAR) AS " + ident(badColumn)
		}
	}
	return strings.Join(parts, ", ")
}

// parquetColumn is the projection of schema column col from a Parquet
// chunk whose (union) column is got, and under rescue the text to rescue
// (an expression, NULL when the value fits).
func (r *reader) parquetColumn(col, got bookmark.Column) (expr, rescue string) {
	if sameType(got.Type, col.Type) {
		return ident(col.Name), ""
	}
	ft, err1 := modelType(got.Type)
	st, err2 := modelType(col.Type)
	if !r.rescuing() || (err1 == nil && err2 == nil && bookmark.Widens(ft, st)) {
		return fmt.Sprintf("CAST(%s AS %s) AS %s", ident(col.Name), col.Type, ident(col.Name)), ""
	}
	v := ident(col.Name)
	var fit string
	isBool := func(t bookmark.Type, err error) bool { return err == nil && t.Kind == bookmark.Boolean }
	switch {
	case err1 == nil && ft.Kind == bookmark.Varchar && isBool(st, err2):
		// Only the words themselves: DuckDB's cast also takes yes, no,
		// t, f, 1 and 0.
		fit = fmt.Sprintf("coalesce(lower(trim(%s)) IN ('true', 'false'), false)", v)
	case err1 == nil && ft.Kind == bookmark.Varchar:
		fit = fmt.Sprintf("coalesce(%s, false)", r.fitsTextAs(v, col.Type, "csv"))
	case isBool(ft, err1) != isBool(st, err2):
		// A boolean is no number nor a number a boolean, though the
		// casts both ways give true back as 1 and 1 back as true.
		fit = "false"
	default:
		fit = fmt.Sprintf("coalesce(CAST(TRY_CAST(%[1]s AS %[2]s) AS %[3]s) = %[1]s, false)", v, col.Type, got.Type)
	}
	expr = fmt.Sprintf("CASE WHEN %s THEN TRY_CAST(%s AS %s) END AS %s", fit, v, col.Type, ident(col.Name))
	return expr, fmt.Sprintf("CASE WHEN %s IS NOT NULL AND NOT %s THEN %s::VARCHAR END", v, fit, v)
}

// fitsTextAs is fitsText with the checks of another format's text.
func (r *reader) fitsTextAs(t, typ, format string) string {
	if strings.EqualFold(typ, "VARCHAR") {
		return "true"
	}
	if vc := checkFor(typ, format, options{}, options{}); vc != nil {
		return "(" + vc.okSQL(t) + ")"
	}
	return fmt.Sprintf("TRY_CAST(%s AS %s) IS NOT NULL", t, typ)
}

// rescueEntry is one {k, v} entry of the rescued list.
func rescueEntry(name, value string) string {
	return fmt.Sprintf("{'k': %s, 'v': CAST(%s AS VARCHAR)}", literal(name), value)
}

// fitColumn names the column of a rescuing read that says whether
// column name's value fits (or is NULL).
func fitColumn(name string) string { return internalPrefix + "_fit_" + name }

// fitColumns are the fit columns of chunk ch's rescuable columns, for
// the read under the projection: true when the value is NULL or fits.
func (r *reader) fitColumns(ch *readChunk) []string {
	have := chunkColumns(ch)
	var out []string
	for _, col := range r.data {
		if _, ok := have[strings.ToLower(col.Name)]; !ok || !r.rescuable(col) {
			continue
		}
		t, present := r.textOf(col.Name)
		fit := fmt.Sprintf("coalesce(%s, false)", r.fitsText(t, col.Type))
		if r.src.Format == "json" {
			fit = fmt.Sprintf("(%s IS NOT NULL AND %s)", t, fit)
		}
		out = append(out, fmt.Sprintf("(NOT %s OR %s) AS %s", present, fit, ident(fitColumn(col.Name))))
	}
	return out
}

// rescuedSQL is the rescued column of a chunk's rows: entries are the
// {k, v} entries, conds the conditions under which one of them is not
// NULL (cheap to test on every row, unlike the list).
func (r *reader) rescuedSQL(ch *readChunk, entries, conds []string) string {
	if len(entries) == 0 {
		return "CAST(NULL AS VARCHAR) AS " + ident(engine.RescuedColumn)
	}
	var key strings.Builder
	key.WriteString("CASE " + ident(fileColumn))
	for _, p := range ch.paths {
		fmt.Fprintf(&key, " WHEN %s THEN %s", literal(p), literal(r.in.keyOf(p)))
	}
	key.WriteString(" END")
	list := fmt.Sprintf("list_filter([%s], e -> e.v IS NOT NULL)", strings.Join(entries, ", "))
	return fmt.Sprintf("CASE WHEN %[5]s THEN CAST(to_json(map_from_entries(list_append(%[1]s, {'k': %[2]s, 'v': %[3]s}))) AS VARCHAR) END AS %[4]s",
		list, literal(engine.RescuedFileKey), key.String(), ident(engine.RescuedColumn), strings.Join(conds, " OR "))
}

// needsFile reports whether the reads carry each row's file.
func (r *reader) needsFile() bool { return r.checked != nil || r.rescuing() }
