package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// checkParquet reads every file's footer (never its data) and returns the
// source's row count. A file whose columns differ from r.data in name or
// type, or whose footer is unreadable, fails with an *engine.InputError
// naming it. Files are grouped by their Parquet schema, so DuckDB is asked
// for the column types of one file per distinct schema only.
func (r *reader) checkParquet(ctx context.Context, c *sql.Conn) (int64, error) {
	var rows int64
	order := make(map[string]int, len(r.in.paths))
	for i, p := range r.in.paths {
		order[p] = i
	}
	sigFile := map[string]string{} // schema signature -> first file (plan order) with it
	fileSig := map[string]string{} // file -> its schema signature
	var sigs []string
	for _, chunk := range r.in.chunks() {
		q := fmt.Sprintf(`SELECT m.file_name, m.num_rows, s.sig FROM parquet_file_metadata(%[1]s) m
			JOIN (SELECT file_name, string_agg(concat_ws(':', name, type, type_length, repetition_type, num_children,
				converted_type, scale, precision, logical_type, duckdb_type), '|' ORDER BY column_id) AS sig
				FROM parquet_schema(%[1]s) GROUP BY file_name) s USING (file_name)`, pathList(chunk))
		res, err := c.QueryContext(ctx, q)
		if err != nil {
			return 0, r.footerError(ctx, c, chunk, err)
		}
		for res.Next() {
			var file, sig string
			var n int64
			if err := res.Scan(&file, &n, &sig); err != nil {
				res.Close()
				return 0, err
			}
			rows += n
			fileSig[file] = sig
			if first, ok := sigFile[sig]; !ok {
				sigFile[sig] = file
				sigs = append(sigs, sig)
			} else if order[file] < order[first] {
				sigFile[sig] = file
			}
		}
		err = res.Err()
		res.Close()
		if err != nil {
			return 0, r.footerError(ctx, c, chunk, err)
		}
	}
	// Check signatures in the plan order of their first files, so that the
	// error names the first file that does not fit.
	sort.Slice(sigs, func(i, j int) bool { return order[sigFile[sigs[i]]] < order[sigFile[sigs[j]]] })
	for _, sig := range sigs {
		file := sigFile[sig]
		cols, err := describe(ctx, c, fmt.Sprintf("SELECT * FROM read_parquet(%s%s, hive_partitioning=false)",
			literal(file), namedArgs(r.opts, nil)))
		if err != nil {
			return 0, wrap(ctx, err, []*reader{r}, "source %s: reading schema", r.src.Ctx)
		}
		for _, col := range cols {
			if r.isHiveName(col.Name) { // in every mode: the read would hold both, or lose one
				return 0, r.hiveClash(jsonKey{name: col.Name, paths: []string{file}})
			}
		}
		if r.evolving() {
			if err := r.evolveParquet(file, cols); err != nil {
				return 0, err
			}
			continue
		}
		if col, msg := schemaDiff(cols, r.data); msg != "" {
			return 0, &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(file), Column: col,
				Msg: msg + " (schema differs from the source's)"}
		}
	}
	if r.evolving() {
		r.chunkBySchema(fileSig)
		if err := r.parquetChunks(ctx, c); err != nil {
			return 0, err
		}
	}
	return rows, nil
}

// schemaDiff compares a file's columns with the wanted ones by name; it
// returns the first differing column and what differs.
func schemaDiff(got, want []bookmark.Column) (column, msg string) {
	types := map[string]string{}
	for _, c := range got {
		types[c.Name] = c.Type
	}
	for _, w := range want {
		t, ok := types[w.Name]
		if !ok {
			return w.Name, fmt.Sprintf("column %s (%s) is missing", w.Name, w.Type)
		}
		if !sameType(t, w.Type) {
			return w.Name, fmt.Sprintf("column %s is %s, want %s", w.Name, t, w.Type)
		}
		delete(types, w.Name)
	}
	for _, c := range got {
		if _, extra := types[c.Name]; extra {
			return c.Name, fmt.Sprintf("unexpected column %s (%s)", c.Name, c.Type)
		}
	}
	return "", ""
}

// sameType reports whether two DuckDB type texts name the same type:
// DuckDB describes STRUCT(k INTEGER) where duckType (from a recorded
// schema) writes STRUCT("k" INTEGER), so texts are compared in the type
// model, and as they are when either does not parse.
func sameType(a, b string) bool {
	if a == b {
		return true
	}
	ta, errA := modelType(a)
	tb, errB := modelType(b)
	return errA == nil && errB == nil && ta.String() == tb.String()
}

// footerError names the file behind a failed footer read: from the message
// when DuckDB says, else by reading each footer of the chunk alone.
func (r *reader) footerError(ctx context.Context, c *sql.Conn, chunk []string, err error) error {
	if ctx.Err() != nil {
		return wrap(ctx, err, nil, "source %s", r.src.Ctx)
	}
	if ie, ok := asInputError(err, []*reader{r}); ok {
		return ie
	}
	for _, p := range chunk {
		var n int64
		if perr := c.QueryRowContext(ctx, "SELECT count(*) FROM parquet_schema("+literal(p)+")").Scan(&n); perr != nil {
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(p), Msg: message(perr)}
		}
	}
	return wrap(ctx, err, []*reader{r}, "source %s: reading footers", r.src.Ctx)
}

// probeParquet finds a Parquet file that cannot be read in full, after a
// query failed with an error that named no file (damaged data pages). It
// reads each file of each Parquet source alone, decoding every column; it
// runs only on that failure path.
func probeParquet(ctx context.Context, c *sql.Conn, readers []*reader) *engine.InputError {
	for _, r := range readers {
		if r.src.Format != "parquet" {
			continue
		}
		for _, p := range r.in.paths {
			q := fmt.Sprintf("SELECT max(hash(t)) FROM read_parquet(%s%s, hive_partitioning=false) t",
				literal(p), namedArgs(r.opts, nil))
			var h any
			if err := c.QueryRowContext(ctx, q).Scan(&h); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(p),
					Msg: strings.ReplaceAll(message(err), p, r.in.keyOf(p))}
			}
		}
	}
	return nil
}
