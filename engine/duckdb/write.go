package duckdb

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// jsonColumn carries a row serialized by to_json when writing JSON.
const jsonColumn = internalPrefix + "_json"

// writeSink writes the rows of s.From into s.Location with one COPY.
//
// Layout: without partitions and without file_size_bytes/per_thread_output
// DuckDB writes one file, data_0.<ext>; otherwise it writes a folder tree
// (key=value/ folders for partitions, data_<n>.<ext> files). One file is the
// default because DuckDB already writes a single Parquet file with all
// threads (row groups in parallel) and the committer renames staged files
// anyway; several files only pay off when readers want to split work, at
// the price of a file count that depends on the data or the thread count.
//
// Parquet reports each file's rows and bytes through RETURN_STATS. DuckDB
// has no RETURN_STATS for CSV, and JSON (written through the CSV writer,
// because DuckDB's JSON COPY has no PARTITION_BY) neither: one file takes
// the COPY's row count, several are counted by reading them back.
//
// A result with no rows leaves no file behind: an empty Parquet or a
// header-only CSV would be published as a part holding nothing.
// singleFile is the name (before its extension) of the one file DuckDB
// writes for an unpartitioned sink, front to back (engine.Caps.Growing).
const singleFile = "data_0"

func (x *execution) writeSink(ctx context.Context, s *engine.Sink) (engine.SinkResult, error) {
	var res engine.SinkResult
	opts, err := parseOptions(writerOptions, s.Format, s.Options)
	if err != nil {
		return res, fmt.Errorf("sink %s: %w", s.Ctx, err)
	}
	dir, err := filepath.Abs(s.Location)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return res, fmt.Errorf("sink %s: creating %s: %w", s.Ctx, s.Location, err)
	}
	if err := checkText("sink dir", dir); err != nil {
		return res, fmt.Errorf("sink %s: %w", s.Ctx, err)
	}
	// Everything in dir is reported as written by this sink.
	if entries, err := os.ReadDir(dir); err != nil {
		return res, fmt.Errorf("sink %s: %w", s.Ctx, err)
	} else if len(entries) > 0 {
		return res, fmt.Errorf("sink %s: staging folder %s is not empty", s.Ctx, dir)
	}
	cols, err := describe(ctx, x.c, "SELECT * FROM "+ident(s.From))
	if err != nil {
		return res, wrap(ctx, err, x.readers, "sink %s: reading %s", s.Ctx, s.From)
	}
	parts, err := partitionColumns(s, cols)
	if err != nil {
		return res, err
	}
	res.Schema = modelColumns(cols)

	query := "SELECT * FROM " + ident(s.From)
	switch s.Format {
	case "json":
		query = jsonQuery(s.From, cols, parts)
	case "csv":
		query = csvQuery(s.From, cols, parts)
	case "parquet":
		query = parquetQuery(s.From, cols)
	}
	multi := len(parts) > 0 || opts.has("file_size_bytes") || opts.boolean("per_thread_output", false)
	target := dir
	if !multi {
		target = filepath.Join(dir, singleFile+extension(s.Format, opts))
	}
	stmt := fmt.Sprintf("COPY (%s) TO %s (%s)", query, literal(target), copyOptions(s.Format, opts, parts))

	var files []engine.StagedFile
	if s.Format == "parquet" {
		files, err = x.copyParquet(ctx, stmt, dir)
	} else {
		files, err = x.copyText(ctx, stmt, dir, s, opts, len(cols)-len(parts))
	}
	if clash := x.nullFolderClash(ctx, s, parts, dir); clash != nil {
		return res, clash
	}
	if err != nil {
		if ie := negativeInterval(err, s, cols); ie != nil {
			return res, ie
		}
		return res, x.sinkError(ctx, err, s)
	}
	for _, f := range files {
		if f.Rows == 0 {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil {
				return res, fmt.Errorf("sink %s: removing empty %s: %w", s.Ctx, f.Path, err)
			}
			continue
		}
		res.Files = append(res.Files, f)
		res.Rows += f.Rows
	}
	removeEmptyDirs(dir)
	return res, nil
}

// hiveNull names the folder of a partition column's NULLs, as DuckDB
// writes it and Hive-style readers read it.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// nullFolderClash fails a partitioned sink whose partition column holds
// the text __HIVE_DEFAULT_PARTITION__: DuckDB writes it into the folder of
// the column's NULLs, where one file can overwrite the other (rows lost
// after the commit) and every reader reads it back as NULL. The text NULL
// in any case fails too: DuckDB reads the folder p=NULL back as NULL. Only
// a write that made such a folder pays for the query.
func (x *execution) nullFolderClash(ctx context.Context, s *engine.Sink, parts []string, dir string) error {
	for _, p := range parts {
		if !engine.HasFolder(dir, p+"="+hiveNull, false) && !engine.HasFolder(dir, p+"=null", true) {
			continue
		}
		var text string
		var n int64
		q := fmt.Sprintf("SELECT coalesce(min(v), ''), count(*) FROM (SELECT CAST(%s AS VARCHAR) AS v FROM %s) WHERE v = %s OR upper(v) = 'NULL'",
			ident(p), ident(s.From), literal(hiveNull))
		if err := x.c.QueryRowContext(ctx, q).Scan(&text, &n); err != nil {
			return wrap(ctx, err, x.readers, "sink %s: checking partition column %s", s.Ctx, p)
		}
		if n > 0 {
			return fmt.Errorf("sink %s: partition column %s holds the text %q in %d rows: that is the name of the folder of "+
				"its NULLs, or a folder read back as NULL, so those rows would be read back as NULL; "+
				"map the text to another value in a transform", s.Ctx, p, text, n)
		}
	}
	return nil
}

// sinkError explains a failed COPY: errors that name an input file become
// InputErrors; an unnamed failure with Parquet sources is probed for a
// damaged file.
func (x *execution) sinkError(ctx context.Context, err error, s *engine.Sink) error {
	if ctx.Err() == nil {
		if _, ok := asInputError(err, x.readers); !ok {
			if ie := probeParquet(ctx, x.c, x.readers); ie != nil {
				return ie
			}
		}
	}
	return wrap(ctx, err, x.readers, "writing sink %s", s.Ctx)
}

// negativeInterval is DuckDB's refusal to write a negative INTERVAL to
// Parquet, which has no negative intervals, naming the sink's INTERVAL
// columns and what to do (DuckDB's message names neither); nil for other
// errors.
func negativeInterval(err error, s *engine.Sink, cols []bookmark.Column) error {
	if s.Format != "parquet" || !strings.Contains(err.Error(), "negative intervals") {
		return nil
	}
	var names []string
	for _, c := range cols {
		if t, terr := modelType(c.Type); terr == nil && t.Kind == bookmark.Interval {
			names = append(names, c.Name)
		}
	}
	what := "column " + strings.Join(names, ", ")
	if len(names) > 1 {
		what = "one of the columns " + strings.Join(names, ", ")
	}
	return fmt.Errorf("writing sink %s: %s holds a negative interval, which Parquet cannot store: "+
		"write it as text (CAST(... AS VARCHAR)) in a transform, or to a csv or json sink", s.Ctx, what)
}

// partitionColumns resolves PartitionBy against the relation's columns
// (DuckDB names are case-insensitive) and returns them as spelled there.
func partitionColumns(s *engine.Sink, cols []bookmark.Column) ([]string, error) {
	var parts []string
	for _, p := range s.PartitionBy {
		i := slices.IndexFunc(cols, func(c bookmark.Column) bool { return strings.EqualFold(c.Name, p) })
		if i < 0 {
			return nil, fmt.Errorf("sink %s: partition column %s is not a column of %s", s.Ctx, p, s.From)
		}
		parts = append(parts, cols[i].Name)
	}
	if len(parts) > 0 && len(parts) >= len(cols) {
		return nil, fmt.Errorf("sink %s: every column of %s is a partition column; nothing would be left to write", s.Ctx, s.From)
	}
	return parts, nil
}

// jsonQuery serializes each row's non-partition columns with to_json,
// which writes exactly what DuckDB's FORMAT json writes, but for the NaN
// and infinities of DOUBLE and FLOAT columns (jsonFloat).
func jsonQuery(from string, cols []bookmark.Column, parts []string) string {
	var fields []string
	for _, c := range cols {
		if !slices.Contains(parts, c.Name) {
			v := ident(c.Name)
			if t, err := modelType(c.Type); err == nil && (t.Kind == bookmark.Double || t.Kind == bookmark.Float) {
				v = jsonFloat(v)
			}
			fields = append(fields, ident(c.Name)+" := "+v)
		}
	}
	sel := fmt.Sprintf("to_json(struct_pack(%s)) AS %s", strings.Join(fields, ", "), ident(jsonColumn))
	for _, p := range parts {
		sel += ", " + ident(p)
	}
	return "SELECT " + sel + " FROM " + ident(from)
}

// csvQuery is the rows of a CSV sink: NaN and the infinities of DOUBLE
// and FLOAT columns are written NaN, Infinity and -Infinity, as Spark
// writes and reads them (DuckDB writes nan, inf and -inf, which Spark's
// CSV reader refuses); DuckDB reads both.
func csvQuery(from string, cols []bookmark.Column, parts []string) string {
	var repl []string
	for _, c := range cols {
		if t, err := modelType(c.Type); err == nil && (t.Kind == bookmark.Double || t.Kind == bookmark.Float) && !slices.Contains(parts, c.Name) {
			repl = append(repl, fmt.Sprintf(`CASE WHEN isnan(%[1]s) THEN 'NaN' WHEN isinf(%[1]s) AND %[1]s > 0 THEN 'Infinity' `+
				`WHEN isinf(%[1]s) THEN '-Infinity' ELSE CAST(%[1]s AS VARCHAR) END AS %[1]s`, ident(c.Name)))
		}
	}
	if len(repl) == 0 {
		return "SELECT * FROM " + ident(from)
	}
	return "SELECT * REPLACE (" + strings.Join(repl, ", ") + ") FROM " + ident(from)
}

// parquetQuery is what a Parquet sink writes of view from: a HUGEINT or
// UHUGEINT column as DECIMAL(38,0), which DuckDB's Parquet writer would
// write as a DOUBLE, keeping 17 digits of 12345678901234567890 (a value
// past DECIMAL(38,0) fails the sink; the Spark engine writes these types
// as DECIMAL(38,0) too).
func parquetQuery(from string, cols []bookmark.Column) string {
	var repl []string
	for _, c := range cols {
		if t := strings.ToUpper(c.Type); t == "HUGEINT" || t == "UHUGEINT" {
			repl = append(repl, fmt.Sprintf("CAST(%[1]s AS DECIMAL(38,0)) AS %[1]s", ident(c.Name)))
		}
	}
	if len(repl) == 0 {
		return "SELECT * FROM " + ident(from)
	}
	return "SELECT * REPLACE (" + strings.Join(repl, ", ") + ") FROM " + ident(from)
}

// jsonFloat is the JSON of a float column v: NaN and the infinities, which
// JSON has no number for (to_json writes them bare, which strict readers
// refuse), as the strings "NaN", "Infinity" and "-Infinity", which the
// JSON sources read back into a DOUBLE or FLOAT column as the same values.
func jsonFloat(v string) string {
	return fmt.Sprintf(`CASE WHEN isnan(%[1]s) THEN '"NaN"'::JSON WHEN isinf(%[1]s) AND %[1]s > 0 THEN '"Infinity"'::JSON `+
		`WHEN isinf(%[1]s) THEN '"-Infinity"'::JSON ELSE to_json(%[1]s) END`, v)
}

// extension is the file name suffix of a sink's files.
func extension(format string, opts options) string {
	ext := "." + format
	if format == "parquet" {
		return ext
	}
	switch c, _ := opts.str("compression"); c {
	case "gzip":
		ext += ".gz"
	case "zstd":
		ext += ".zst"
	}
	return ext
}

// copyOptions renders the COPY option list.
func copyOptions(format string, opts options, parts []string) string {
	var o []string
	switch format {
	case "parquet":
		comp, ok := opts.str("compression")
		if !ok {
			comp = "snappy"
		} else if comp == "none" {
			comp = "uncompressed"
		}
		o = append(o, "FORMAT parquet", "COMPRESSION "+literal(comp), "RETURN_STATS")
	case "csv":
		o = append(o, "FORMAT csv", fmt.Sprintf("HEADER %t", opts.boolean("header", true)))
	case "json":
		// One column, never NULL, never containing a raw newline or 0x1f.
		o = append(o, "FORMAT csv", "HEADER false", "QUOTE ''", "ESCAPE ''", `DELIM E'\x1f'`, "FILE_EXTENSION 'json'")
	}
	for _, n := range opts.sortedNames() {
		if n == "header" || format == "parquet" && n == "compression" {
			continue
		}
		v := opts[n].value
		if list, ok := v.([]string); ok { // force_quote takes column names
			quoted := make([]string, len(list))
			for i, s := range list {
				quoted[i] = ident(s)
			}
			o = append(o, strings.ToUpper(n)+" ("+strings.Join(quoted, ", ")+")")
			continue
		}
		o = append(o, strings.ToUpper(n)+" "+sqlValue(v))
	}
	if len(parts) > 0 {
		quoted := make([]string, len(parts))
		for i, p := range parts {
			quoted[i] = ident(p)
		}
		o = append(o, "PARTITION_BY ("+strings.Join(quoted, ", ")+")")
	}
	return strings.Join(o, ", ")
}

// copyParquet runs a COPY with RETURN_STATS and lists the files it wrote.
func (x *execution) copyParquet(ctx context.Context, stmt, dir string) ([]engine.StagedFile, error) {
	rows, err := x.c.QueryContext(ctx, stmt)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	for i, n := range names {
		idx[n] = i
	}
	for _, n := range []string{"filename", "count", "file_size_bytes"} {
		if _, ok := idx[n]; !ok {
			return nil, fmt.Errorf("RETURN_STATS has no %s column (got %v)", n, names)
		}
	}
	var files []engine.StagedFile
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		rel, err := relPath(dir, fmt.Sprint(vals[idx["filename"]]))
		if err != nil {
			return nil, err
		}
		n, _ := toInt(vals[idx["count"]])
		size, _ := toInt(vals[idx["file_size_bytes"]])
		if slices.ContainsFunc(files, func(f engine.StagedFile) bool { return f.Path == rel }) {
			// Two partitions wrote one file: one overwrote the other.
			return nil, fmt.Errorf("COPY reported the file %s twice: two partitions were written into it, one over the other", rel)
		}
		files = append(files, engine.StagedFile{Path: rel, Rows: n, Bytes: size})
	}
	return files, rows.Err()
}

// copyText runs a CSV or JSON COPY, then lists and counts what it wrote.
func (x *execution) copyText(ctx context.Context, stmt, dir string, s *engine.Sink, opts options, ncols int) ([]engine.StagedFile, error) {
	var total int64
	if err := x.c.QueryRowContext(ctx, stmt).Scan(&total); err != nil {
		return nil, err
	}
	var files []engine.StagedFile
	var abs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := relPath(dir, p)
		if err != nil {
			return err
		}
		files = append(files, engine.StagedFile{Path: rel, Bytes: info.Size()})
		abs = append(abs, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	switch {
	case len(files) == 1:
		files[0].Rows = total
	case len(files) > 1:
		counts, err := x.countRows(ctx, abs, s.Format, opts, ncols)
		if err != nil {
			return nil, fmt.Errorf("counting rows of written files: %w", err)
		}
		var sum int64
		for i, p := range abs {
			files[i].Rows = counts[p]
			sum += counts[p]
		}
		if sum != total {
			return nil, fmt.Errorf("written files hold %d rows, COPY reported %d", sum, total)
		}
	}
	return files, nil
}

// countRows reads written CSV or JSON files back and counts rows per file.
func (x *execution) countRows(ctx context.Context, files []string, format string, opts options, ncols int) (map[string]int64, error) {
	var args string
	if format == "json" {
		args = `columns={'j': 'VARCHAR'}, header=false, quote='', escape='', delim=E'\x1f'`
	} else {
		cols := make([]bookmark.Column, ncols)
		for i := range cols {
			cols[i] = bookmark.Column{Name: fmt.Sprintf("c%d", i), Type: "VARCHAR"}
		}
		quote, ok := opts.str("quote")
		if !ok {
			quote = `"`
		}
		escape, ok := opts.str("escape")
		if !ok {
			escape = quote
		}
		delim, ok := opts.str("delim")
		if !ok {
			delim = ","
		}
		args = fmt.Sprintf("columns=%s, header=%t, quote=%s, escape=%s, delim=%s",
			columnsArg(cols), opts.boolean("header", true), literal(quote), literal(escape), literal(delim))
	}
	q := fmt.Sprintf("SELECT %[3]s, count(*) FROM read_csv(%[1]s, %[2]s, auto_detect=false, hive_partitioning=false, filename=%[4]s) GROUP BY ALL",
		pathList(files), args, ident(internalPrefix+"_file"), literal(internalPrefix+"_file"))
	rows, err := x.c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var f string
		var n int64
		if err := rows.Scan(&f, &n); err != nil {
			return nil, err
		}
		out[f] = n
	}
	return out, rows.Err()
}

// relPath returns file relative to dir, '/'-separated.
func relPath(dir, file string) (string, error) {
	rel, err := filepath.Rel(dir, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("file %s is outside %s", file, dir)
	}
	return filepath.ToSlash(rel), nil
}

// removeEmptyDirs removes folders left empty under dir (but not dir).
func removeEmptyDirs(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}
