package duckdb

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// reader builds the DuckDB read calls of one source. Every read it builds
// for the view states the schema exactly (columns={...} for CSV and JSON,
// an explicit projection for Parquet, hive_types for partition folders), so
// the first run and every later run read the files the same way.
type reader struct {
	src  *engine.Source
	n    int // the source's index in the plan; names internal objects
	in   *inputs
	opts options
	// dialect is the CSV dialect settled for this run (delim, quote,
	// escape, header, skip, ...), as rendered named arguments.
	dialect options
	data    []bookmark.Column // columns inside the files, in file order
	hive    []bookmark.Column // partition columns, in folder order
	// rejects makes bad rows skipped instead of failing the run: CSV reads
	// keep them in per-chunk rejects tables; JSON is read as lines.
	rejects bool
	// chunkList is the source's read calls (byname.go): groups of files
	// that share a column order, at most chunkFiles each.
	chunkList []readChunk
	// checked are the file columns read as text and checked before they
	// are converted (strict.go), by name; nil when none are.
	checked map[string]*valueCheck
	// table is the table a kept read filled (see selectSQL).
	table string
	// extra are the columns a rescuing JSON source reads besides the
	// schema's (evolve.go); allText reads every column as text (the
	// widening pass).
	extra   []bookmark.Column
	allText bool
	// links is the execution's link tree, where copies of JSON files
	// with numbers quoted go (jsonnum.go); exactDone are the keys whose
	// numbers are quoted.
	links     *linker
	exactDone map[string]bool
	// canon is whether checked columns may take the fast path (canon.go).
	canon bool
}

// schema is the full schema the view exposes, in DuckDB types: file
// columns, then hive ones.
func (r *reader) schema() []bookmark.Column {
	out := make([]bookmark.Column, 0, len(r.data)+len(r.hive))
	return append(append(out, r.data...), r.hive...)
}

// pathList renders paths as a DuckDB list literal.
func pathList(paths []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(literal(p))
	}
	b.WriteByte(']')
	return b.String()
}

// columnsArg renders columns as a DuckDB struct literal {'name': 'TYPE'}.
func columnsArg(cols []bookmark.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = literal(c.Name) + ": " + literal(c.Type)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// rejectsTable names the rejects table of chunk i; rejectsScan its scans.
func (r *reader) rejectsTable(i int) string {
	return fmt.Sprintf("%s_rejects_%d_%d", internalPrefix, r.n, i)
}
func (r *reader) rejectsScan(i int) string {
	return fmt.Sprintf("%s_scans_%d_%d", internalPrefix, r.n, i)
}

// readCall renders the table function call that reads paths with the
// settled schema, cols being the file columns in the files' order. chunk
// numbers the call for its rejects tables; hiveAuto leaves partition column
// types to DuckDB's detection (used once, to infer them over all files).
func (r *reader) readCall(paths []string, cols []bookmark.Column, chunk int, hiveAuto bool) string {
	var b strings.Builder
	switch r.src.Format {
	case "csv":
		fmt.Fprintf(&b, "read_csv(%s, columns=%s, auto_detect=false", pathList(paths), columnsArg(r.readTypes(cols, hiveAuto)))
		b.WriteString(namedArgs(r.dialect, nil))
		b.WriteString(namedArgs(r.opts, func(o option) bool { return o.spec.inferOnly || r.dialect.has(o.name) }))
		if r.rejects {
			fmt.Fprintf(&b, ", ignore_errors=true, store_rejects=true, rejects_table=%s, rejects_scan=%s",
				literal(r.rejectsTable(chunk)), literal(r.rejectsScan(chunk)))
		}
	case "json":
		fmt.Fprintf(&b, "read_json(%s, format='newline_delimited', records=true, columns=%s, auto_detect=false", pathList(paths), columnsArg(r.readTypes(cols, hiveAuto)))
		b.WriteString(namedArgs(r.opts, func(o option) bool { return o.spec.inferOnly }))
	case "parquet":
		fmt.Fprintf(&b, "read_parquet(%s", pathList(paths))
		b.WriteString(namedArgs(r.opts, nil))
		if r.evolving() {
			b.WriteString(", union_by_name=true")
		}
	}
	if r.needsFile() && !hiveAuto {
		fmt.Fprintf(&b, ", filename=%s", literal(fileColumn))
	}
	b.WriteString(r.hiveArgs(hiveAuto))
	b.WriteByte(')')
	return b.String()
}

// readTypes are the types cols are read with: checked columns as text.
func (r *reader) readTypes(cols []bookmark.Column, hiveAuto bool) []bookmark.Column {
	if hiveAuto || (r.checked == nil && !r.allText && !r.rescuing()) {
		return cols
	}
	known := r.dataIndex()
	out := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		out[i] = c
		_, inSchema := known[strings.ToLower(c.Name)]
		if r.allText || r.checked[c.Name] != nil || (r.rescuing() && (!inSchema || r.rescuable(c))) {
			out[i].Type = "VARCHAR"
			if r.src.Format == "json" && r.jsonTyped() {
				out[i].Type = "JSON"
			}
		}
	}
	return out
}

func (r *reader) hiveArgs(auto bool) string {
	if !r.src.Hive || len(r.in.hiveKeys) == 0 {
		return ", hive_partitioning=false"
	}
	if auto {
		return ", hive_partitioning=true"
	}
	return ", hive_partitioning=true, hive_types=" + columnsArg(r.hive)
}

// projection lists the schema's columns, quoted, in schema order.
func projection(cols []bookmark.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = ident(c.Name)
	}
	return strings.Join(parts, ", ")
}

// selectSQL is the source's full read: a UNION ALL of reads over chunks of
// at most chunkFiles files. With no readable files it is an empty relation
// of the schema's types, read from an empty file so that type names from a
// recorded schema only ever travel inside string literals. keep selects,
// instead of converting checked columns (and failing on a value that does
// not fit), their text and which column failed (see keptSQL).
func (r *reader) selectSQL(l *linker, keep bool) (string, error) {
	cols := r.schema()
	chunks := r.chunkList
	if len(chunks) == 0 {
		if len(cols) == 0 {
			return "SELECT NULL::VARCHAR AS " + ident(internalPrefix+"_empty") + " WHERE false", nil
		}
		empty, err := l.emptyFile()
		if err != nil {
			return "", err
		}
		rescued := ""
		if r.rescuing() {
			rescued = ", CAST(NULL AS VARCHAR) AS " + ident(engine.RescuedColumn)
		}
		return fmt.Sprintf("SELECT *%s FROM read_csv(%s, columns=%s, header=false, auto_detect=false)",
			rescued, literal(empty), columnsArg(cols)), nil
	}
	parts := make([]string, len(chunks))
	for i, c := range chunks {
		list, from := r.selectList(keep), r.readCall(c.paths, c.cols, i, false)
		if r.evolving() {
			list = r.evolvedList(&chunks[i], keep)
			if fits := r.fitColumns(&chunks[i]); r.rescuing() && r.src.Format != "parquet" && len(fits) > 0 {
				from = fmt.Sprintf("(SELECT *, %s FROM %s)", strings.Join(fits, ", "), from)
			}
		}
		parts[i] = fmt.Sprintf("SELECT %s FROM %s", list, from)
	}
	return strings.Join(parts, "\nUNION ALL\n"), nil
}
