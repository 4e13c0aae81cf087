package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// infer settles a first run's schema: Spark infers it (CSV with
// inferSchema, JSON from every record, Parquet from the footers), then
// integers read from text (CSV, JSON) are widened to BIGINT and FLOAT to
// DOUBLE, as the DuckDB engine infers them, and JSON fields are put back in the order of the first
// record (Spark sorts them). The run then reads with that schema, exactly
// as later runs will read with it recorded.
//
// As the DuckDB engine, Spark looks at a sample: sampleFiles files spread
// over the list, and of CSV and JSON about sampleBytes of their records
// (samplingRatio). A value outside the sample that does not fit its type
// is a bad record of the run, named by file and line. Partition columns
// are typed from every file's folders (partitionType), not by Spark.
func (x *execution) infer(ctx context.Context, r *reader) error {
	opts := copyOpts(r.opts)
	if r.src.Format == "csv" {
		opts["inferSchema"] = "true"
	}
	paths, bytes := x.sample(r)
	cols, err := x.inferFrom(ctx, r, opts, paths, bytes)
	if err != nil {
		return err
	}
	if r.src.Format == "csv" && opts["header"] == "true" && len(paths) > 1 {
		// Spark names the columns after the header of one of the files,
		// not always the first: with headers that differ, the first
		// file's names are the schema (as on the DuckDB engine), and the
		// others are checked against them when read.
		first, err := x.firstLine(ctx, r.paths[0])
		if err != nil {
			return x.e.wrapErr(ctx, err, "source %s: inferring the schema", r.src.Ctx)
		}
		if !sameNames(cols, headerNames(first, opts), hiveNames(r.src)) {
			if cols, err = x.inferFrom(ctx, r, opts, r.paths[:1], r.files[0].Size); err != nil {
				return err
			}
		}
	}
	if r.src.Format == "csv" && opts["header"] != "true" {
		headerlessNames(cols, hiveNames(r.src))
	}
	if r.src.Format == "csv" {
		if err := x.keepExact(ctx, r, cols, opts, paths); err != nil {
			return err
		}
	}
	if r.src.Format == "json" {
		first, err := x.firstLine(ctx, r.paths[0])
		if err != nil {
			return x.e.wrapErr(ctx, err, "source %s: inferring the schema", r.src.Ctx)
		}
		cols = jsonOrder(cols, first)
	}
	r.schema = cols
	return nil
}

// headerlessNames names the columns of a CSV file without a header as
// the DuckDB engine names them, column0, column1, ..., the position
// zero-padded to the width of the last one (column00 ... column11), where
// Spark names them _c0, _c1, ...; Spark reads such a file by position, so
// the names are the schema's alone. Hive columns keep theirs.
func headerlessNames(cols []bookmark.Column, hive map[string]bool) {
	n := 0
	for _, c := range cols {
		if !hive[strings.ToLower(c.Name)] {
			n++
		}
	}
	width := len(strconv.Itoa(max(n-1, 0)))
	i := 0
	for j, c := range cols {
		if hive[strings.ToLower(c.Name)] {
			continue
		}
		cols[j].Name = fmt.Sprintf("column%0*d", width, i)
		i++
	}
}

// sameNames reports whether the columns but hive's are names, in order,
// without case.
func sameNames(cols []bookmark.Column, names []string, hive map[string]bool) bool {
	var got []string
	for _, c := range cols {
		if !hive[strings.ToLower(c.Name)] {
			got = append(got, c.Name)
		}
	}
	return slices.EqualFunc(got, names, strings.EqualFold)
}

// inferFrom is the schema Spark infers from paths (of about bytes).
func (x *execution) inferFrom(ctx context.Context, r *reader, opts map[string]string, paths []string, bytes int64) ([]bookmark.Column, error) {
	opts = copyOpts(opts)
	if r.src.Format != "parquet" {
		opts["columnNameOfCorruptRecord"] = corruptCol
		if bytes > sampleBytes {
			opts["samplingRatio"] = strconv.FormatFloat(float64(sampleBytes)/float64(bytes), 'f', 4, 64)
		}
	}
	name := fmt.Sprintf("_tidemark_infer_%d", r.n)
	if err := x.createRead(ctx, name, r.src.Format, "", opts, paths, false); err != nil {
		return nil, x.e.wrapErr(ctx, err, "source %s: inferring the schema", r.src.Ctx)
	}
	rows, err := x.queryRows(ctx, "DESCRIBE "+quoteIdent(name))
	if err != nil {
		return nil, x.e.wrapErr(ctx, err, "source %s: inferring the schema", r.src.Ctx)
	}
	hive := hiveNames(r.src)
	var cols []bookmark.Column
	for _, row := range rows {
		if len(row) < 2 {
			continue
		}
		colName, _ := row[0].(string)
		typ, _ := row[1].(string)
		if colName == "" || strings.HasPrefix(colName, "#") || colName == corruptCol {
			continue
		}
		if typ == "void" {
			typ = "string" // a column that is null in every sampled record
		}
		t, err := modelType(typ, r.src.Format != "parquet")
		if err != nil {
			return nil, fmt.Errorf("source %s: column %s: Spark type %s: %w", r.src.Ctx, colName, typ, err)
		}
		if hive[strings.ToLower(colName)] {
			t = partitionType(r.src, colName)
		}
		cols = append(cols, bookmark.Column{Name: colName, Type: t.String()})
	}
	return cols, x.sql(ctx, "DROP VIEW IF EXISTS "+quoteIdent(name), "source %s: inferring the schema", r.src.Ctx)
}

// sampleFiles and sampleBytes bound what schema inference reads.
const (
	sampleFiles = 32
	sampleBytes = 64 << 20
)

// sample is the files inference reads (spread evenly over the list, first
// and last included) and their bytes.
func (x *execution) sample(r *reader) ([]string, int64) {
	var sizes []int64
	for _, in := range r.src.Files {
		if in.Size > 0 {
			sizes = append(sizes, in.Size)
		}
	}
	idx := make([]int, 0, sampleFiles)
	if n := len(r.paths); n <= sampleFiles {
		for i := range n {
			idx = append(idx, i)
		}
	} else {
		for i := range sampleFiles {
			idx = append(idx, i*(n-1)/(sampleFiles-1))
		}
	}
	paths := make([]string, len(idx))
	var bytes int64
	for j, i := range idx {
		paths[j] = r.paths[i]
		if i < len(sizes) {
			bytes += sizes[i]
		}
	}
	return paths, bytes
}

// firstLine is the first line of a file, read by Spark.
func (x *execution) firstLine(ctx context.Context, path string) ([]byte, error) {
	rows, err := x.s.query(ctx, fmt.Sprintf("SELECT value FROM text.%s LIMIT 1", quoteIdent(path)))
	if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
		return nil, err
	}
	s, _ := rows[0][0].(string)
	return []byte(s), nil
}

// jsonOrder orders cols (and their struct fields) as the keys of the JSON
// object line; names it lacks keep Spark's order, after the others.
func jsonOrder(cols []bookmark.Column, line []byte) []bookmark.Column {
	order := keyOrder(line)
	if order == nil {
		return cols
	}
	out := make([]bookmark.Column, 0, len(cols))
	used := map[int]bool{}
	for _, k := range order.keys {
		for i, c := range cols {
			if !used[i] && c.Name == k {
				used[i] = true
				if t, err := bookmark.ParseType(c.Type); err == nil {
					c.Type = reorderStruct(t, order.sub[k]).String()
				}
				out = append(out, c)
			}
		}
	}
	for i, c := range cols {
		if !used[i] {
			out = append(out, c)
		}
	}
	return out
}

// objOrder is the key order of a JSON object and of its object values.
type objOrder struct {
	keys []string
	sub  map[string]*objOrder
}

func keyOrder(line []byte) *objOrder {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		return nil
	}
	return readObject(d)
}

func readObject(d *json.Decoder) *objOrder {
	o := &objOrder{sub: map[string]*objOrder{}}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return o
		}
		k, _ := tok.(string)
		o.keys = append(o.keys, k)
		tok, err = d.Token()
		if err != nil {
			return o
		}
		switch tok {
		case json.Delim('{'):
			o.sub[k] = readObject(d)
		case json.Delim('['):
			skipTo(d, 1)
		}
	}
	_, _ = d.Token() // }
	return o
}

// skipTo reads tokens until depth open brackets are closed.
func skipTo(d *json.Decoder, depth int) {
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func reorderStruct(t bookmark.Type, o *objOrder) bookmark.Type {
	if t.Kind != bookmark.Struct || o == nil {
		return t
	}
	var out []bookmark.Field
	used := map[int]bool{}
	for _, k := range o.keys {
		for i, f := range t.Fields {
			if !used[i] && f.Name == k {
				used[i] = true
				out = append(out, bookmark.Field{Name: f.Name, Type: reorderStruct(f.Type, o.sub[k])})
			}
		}
	}
	for i, f := range t.Fields {
		if !used[i] {
			out = append(out, f)
		}
	}
	return bookmark.StructOf(out...)
}
