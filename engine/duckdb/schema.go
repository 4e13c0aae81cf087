package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/duckutil"
)

// sampleFiles is how many files, spread evenly over the list (first and
// last included), schema inference looks at. DuckDB sniffs each of them
// (files_to_sniff=-1) and unifies their types, so a column that holds ints
// in the first file and text in another becomes VARCHAR. Files outside the
// sample are read with the inferred schema; a value there that does not fit
// fails the run with file, line and column (and the user can pin the type
// with the types option).
const sampleFiles = 32

// settleSchema decides the columns the source is read with: the recorded
// schema when the plan has one, else the inferred one.
func (r *reader) settleSchema(ctx context.Context, c *sql.Conn) error {
	if r.src.Format == "csv" {
		if err := r.settleDialect(ctx, c); err != nil {
			return err
		}
	}
	if r.src.Schema != nil {
		if err := r.applySchema(r.src.Schema); err != nil {
			return err
		}
	} else if err := r.inferSchema(ctx, c); err != nil {
		return err
	}
	if err := r.groupByHeader(ctx, c); err != nil {
		return err
	}
	if err := r.exactNumbers(r.links); err != nil {
		return err
	}
	if r.evolving() && r.src.Format != "parquet" && !r.src.Stream {
		if err := r.evolveText(ctx, c); err != nil {
			return err
		}
	} else if r.src.Format == "json" && !r.src.Stream {
		if err := r.checkJSONKeys(ctx, c); err != nil {
			return err
		}
	}
	r.settleChecks()
	return r.checkHiveValues(ctx, c)
}

// inferSchema infers the file columns from a sample of files, then the
// partition columns' types from every file's folders.
func (r *reader) inferSchema(ctx context.Context, c *sql.Conn) error {
	if len(r.in.paths) == 0 {
		return nil
	}
	sample := spread(r.in.paths, sampleFiles)
	union := ""
	if r.evolving() {
		union = ", union_by_name=true" // files may differ: the sample's columns, all of them
	}
	query := func(sample []string) (q string) {
		switch r.src.Format {
		case "csv":
			// An escape equal to the quote is left to the sniffer: DuckDB 1.5
			// sniffs ~5x slower when both are set (380 ms instead of 75 ms
			// for 20 files of 100,000 rows), and types come out the same.
			quote, _ := r.dialect.str("quote")
			q = fmt.Sprintf("SELECT * FROM read_csv(%s, files_to_sniff=-1, ignore_errors=true%s%s%s, hive_partitioning=false)",
				pathList(sample), union,
				namedArgs(r.dialect, func(o option) bool { return o.name == "escape" && o.value == quote }),
				namedArgs(r.opts, func(o option) bool { return r.dialect.has(o.name) }))
		case "json":
			q = fmt.Sprintf("SELECT * FROM read_json(%s, format='newline_delimited', records=true, maximum_sample_files=%d, ignore_errors=true%s%s, hive_partitioning=false)",
				pathList(sample), sampleFiles, union, namedArgs(r.opts, nil))
		case "parquet":
			q = fmt.Sprintf("SELECT * FROM read_parquet(%s%s, hive_partitioning=false)",
				pathList(sample[:1]), namedArgs(r.opts, nil))
		}
		return q
	}
	q := query(sample)
	data, err := describe(ctx, c, q)
	if err != nil {
		if r.src.Format == "json" && ctx.Err() == nil && strings.Contains(err.Error(), "non-record JSON") {
			if ie := r.notAnObject(ctx, c, sample); ie != nil {
				return ie
			}
		}
		if r.src.Format == "csv" && ctx.Err() == nil {
			// DuckDB's sniffer only says it found no dialect.
			if ie := r.unclosedQuote(sample); ie != nil {
				return ie
			}
		}
		return wrap(ctx, err, []*reader{r}, "source %s: inferring schema", r.src.Ctx)
	}
	r.data = data
	if r.src.Format == "csv" {
		if err := r.keepExact(ctx, c, q); err != nil {
			return err
		}
	}
	if !r.src.Hive || len(r.in.hiveKeys) == 0 {
		return nil
	}
	if err := r.checkHiveClash(ctx, c, sample, query); err != nil {
		return err
	}
	// DuckDB's hive type detection looks at every path; binding is enough.
	full, err := describe(ctx, c, "SELECT * FROM "+r.readCall(r.in.paths, r.data, 0, true))
	if err != nil {
		return wrap(ctx, err, []*reader{r}, "source %s: inferring partition columns", r.src.Ctx)
	}
	if len(full) != len(data)+len(r.in.hiveKeys) {
		return fmt.Errorf("source %s: inferring partition columns: got %d columns, want %d file columns and %d partition columns",
			r.src.Ctx, len(full), len(data), len(r.in.hiveKeys))
	}
	r.hive = full[len(data):]
	return nil
}

// notAnObject names the first line of the JSON files at paths that is not
// an object (DuckDB's inference says only that it met one); nil when it
// finds none.
func (r *reader) notAnObject(ctx context.Context, c *sql.Conn, paths []string) *engine.InputError {
	comp := r.objectReadArgs()
	var file, text string
	err := c.QueryRowContext(ctx, fmt.Sprintf(`SELECT filename, json::VARCHAR FROM read_ndjson_objects(%s, filename=true, ignore_errors=true%s, hive_partitioning=false)
		WHERE json_type(json) <> 'OBJECT' LIMIT 1`, pathList(paths), comp)).Scan(&file, &text)
	if err != nil {
		return nil
	}
	return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(file),
		Msg: "a line holds JSON that is not an object: format json reads JSON Lines, one object per line " +
			"(a file holding one JSON array of objects is not JSON Lines): " + clip(text)}
}

// checkHiveClash fails the source when a file column has the name of a
// partition folder: the file's value and the folder's would be one column,
// and one of them lost. The error names the first sampled file that holds
// the column.
func (r *reader) checkHiveClash(ctx context.Context, c *sql.Conn, sample []string, query func([]string) string) error {
	for _, col := range r.data {
		if !r.isHiveName(col.Name) {
			continue
		}
		file := r.in.keyOf(sample[0])
		for _, p := range sample {
			cols, err := describe(ctx, c, query([]string{p}))
			if err == nil && slices.ContainsFunc(cols, func(d bookmark.Column) bool { return strings.EqualFold(d.Name, col.Name) }) {
				file = r.in.keyOf(p)
				break
			}
		}
		return engine.PartitionClash(r.src.Ctx, file, col.Name, r.src.Format == "json")
	}
	return nil
}

// applySchema splits a recorded schema into file and partition columns.
func (r *reader) applySchema(schema []bookmark.Column) error {
	isHive := map[string]bool{}
	for _, k := range r.in.hiveKeys {
		isHive[strings.ToLower(k)] = true
	}
	r.data, r.hive = nil, nil
	schema, err := duckColumns(schema)
	if err != nil {
		return fmt.Errorf("source %s: recorded schema: %w", r.src.Ctx, err)
	}
	for _, col := range schema {
		if err := checkText("schema column", col.Name+col.Type); err != nil {
			return fmt.Errorf("source %s: recorded schema: %w", r.src.Ctx, err)
		}
		if isHive[strings.ToLower(col.Name)] {
			r.hive = append(r.hive, col)
			delete(isHive, strings.ToLower(col.Name))
			continue
		}
		r.data = append(r.data, col)
	}
	for _, k := range r.in.hiveKeys {
		if isHive[strings.ToLower(k)] {
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keys[0], Column: k,
				Msg: "partition folder " + k + " is not a column of the recorded schema"}
		}
	}
	if len(r.data) == 0 && len(r.in.paths) > 0 {
		return fmt.Errorf("source %s: recorded schema has no file columns", r.src.Ctx)
	}
	return nil
}

// scalarType is what a partition column's type may look like; these types
// are written into SQL as type names, so nothing else is accepted.
var scalarType = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ ]*(\([0-9, ]+\))?$`)

// checkHiveValues fails with the first file whose partition value does not
// convert to its column's type without loss. On a first run (no recorded
// schema) a column typed by DuckDB's inference that some value does not
// fit that way is read as VARCHAR instead: its type is the run's to choose,
// and DuckDB's detection takes p=2024-01-01T10:00:00+02:00 for a TIMESTAMP
// (dropping the offset).
func (r *reader) checkHiveValues(ctx context.Context, c *sql.Conn) error {
	for k := range r.hive {
		col := r.hive[k]
		if strings.EqualFold(col.Type, "VARCHAR") {
			continue
		}
		if !scalarType.MatchString(col.Type) {
			return fmt.Errorf("source %s: partition column %s has type %q, want a scalar type", r.src.Ctx, col.Name, col.Type)
		}
		bad, key, err := r.hiveMisfit(ctx, c, col)
		switch {
		case err != nil:
			return err
		case key == "":
		case r.src.Schema == nil:
			r.hive[k].Type = "VARCHAR"
		default:
			return &engine.InputError{Source: r.src.Ctx, File: key, Column: col.Name,
				Msg: fmt.Sprintf("partition value %q is not a %s, or would lose something converted to one", bad, col.Type)}
		}
	}
	return nil
}

// hiveMisfit returns the first value of partition column col that does not
// convert to its type without loss, and the first key with it ("" when
// every value fits). The check is the one of file values (strict.go):
// p=1.5 is not a BIGINT, p=2024-01-02T10:00:00 not a DATE.
func (r *reader) hiveMisfit(ctx context.Context, c *sql.Conn, col bookmark.Column) (value, key string, err error) {
	i := slices.IndexFunc(r.in.hiveKeys, func(k string) bool { return strings.EqualFold(k, col.Name) })
	first := map[string]string{} // value -> first key with it
	var values []string
	for _, key := range r.in.keys {
		dirs, _ := hiveDirs(key)
		_, v, _ := strings.Cut(dirs[i], "=")
		if dec, err := url.PathUnescape(v); err == nil {
			v = dec
		}
		if _, seen := first[v]; !seen {
			first[v] = key
			values = append(values, v)
		}
	}
	fits := fmt.Sprintf("TRY_CAST(v AS %s) IS NOT NULL", col.Type)
	if vc := checkFor(col.Type, "csv", nil, nil); vc != nil {
		fits = vc.okSQL("v")
	}
	for start := 0; start < len(values); start += 1000 {
		batch := values[start:min(start+1000, len(values))]
		rows := make([]string, len(batch))
		for j, v := range batch {
			rows[j] = "(" + literal(v) + ")"
		}
		q := fmt.Sprintf("SELECT v FROM (VALUES %s) t(v) WHERE v <> '__HIVE_DEFAULT_PARTITION__' AND NOT coalesce(%s, false) LIMIT 1",
			strings.Join(rows, ", "), fits)
		var bad string
		err := c.QueryRowContext(ctx, q).Scan(&bad)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("source %s: checking partition values: %w", r.src.Ctx, err)
		}
		return bad, first[bad], nil
	}
	return "", "", nil
}

// describe returns the columns of query.
func describe(ctx context.Context, c *sql.Conn, query string) ([]bookmark.Column, error) {
	return duckutil.Describe(ctx, c, query)
}

// spread picks at most n items of list, evenly spaced, first and last
// included.
func spread(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	out := make([]string, n)
	for i := range n {
		out[i] = list[i*(len(list)-1)/(n-1)]
	}
	return out
}
