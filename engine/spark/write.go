package spark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// writeSink writes one sink into its Location and lists what it wrote.
func (x *execution) writeSink(ctx context.Context, s *engine.Sink) (engine.SinkResult, error) {
	from := x.from(s)
	if from == "" {
		return engine.SinkResult{}, fmt.Errorf("sink %s: no from, and the plan has no transform and several sources", s.Ctx)
	}
	opts, err := writerOpts(s.Format, s.Options)
	if err != nil {
		return engine.SinkResult{}, fmt.Errorf("sink %s: %w", s.Ctx, err)
	}
	q := "SELECT * FROM " + quoteIdent(from)
	var cols []column
	if s.Format != "parquet" || len(s.PartitionBy) > 0 {
		if cols, err = x.columnsOf(ctx, from); err != nil {
			return engine.SinkResult{}, x.wrap(ctx, err, "sink %s: reading the columns of %s", s.Ctx, from)
		}
		nullLines(s, cols, opts)
		q = "SELECT " + selectList(s, cols, opts) + " FROM " + quoteIdent(from)
	}
	if s.Ordered {
		if q, err = x.inReadOrder(ctx, s, from, q); err != nil {
			return engine.SinkResult{}, err
		}
	}
	werr := x.write(ctx, q, s.Format, s.Location, opts, s.PartitionBy)
	if err := x.partitionTexts(ctx, s, from, cols, werr != nil); err != nil {
		return engine.SinkResult{}, err
	}
	if werr != nil {
		return engine.SinkResult{}, x.wrap(ctx, werr, "sink %s: writing", s.Ctx)
	}
	return x.staged(ctx, s.Ctx, s.Location, s.Format, opts)
}

// inReadOrder is query q, which writes sink s from view from, ordered as
// the rows were read: the sources' files in the plan's order, each file's
// rows in file order (Spark packs the files into tasks largest first, so
// a merge sink, where the last row of a key wins, kept an older file's
// version over a newer one's). A file's place comes from
// input_file_name(), looked up among the readers' files; its rows keep
// the order of monotonically_increasing_id(), which follows a file's
// splits. The sorted write names its files in that order.
func (x *execution) inReadOrder(ctx context.Context, s *engine.Sink, from, q string) (string, error) {
	rows, err := x.queryRows(ctx, "SELECT DISTINCT input_file_name() FROM "+quoteIdent(from))
	if err != nil {
		return "", x.wrap(ctx, err, "sink %s: listing the files of %s", s.Ctx, from)
	}
	var cases []string
	for _, row := range rows {
		f, _ := row[0].(string)
		if n, ok := x.readPlace(f); ok && f != "" {
			cases = append(cases, fmt.Sprintf("WHEN %s THEN %d", hexString(f), n))
		}
	}
	if len(cases) < 2 {
		return q, nil // one file: read in order already
	}
	return fmt.Sprintf("SELECT * EXCEPT (`_tidemark_file`, `_tidemark_row`) FROM (SELECT *, CASE input_file_name() %s END AS `_tidemark_file`, "+
		"monotonically_increasing_id() AS `_tidemark_row` FROM (%s)) ORDER BY `_tidemark_file`, `_tidemark_row`", strings.Join(cases, " "), q), nil
}

// readPlace is the place of Spark's file f among the files the readers
// read, in the plan's order.
func (x *execution) readPlace(f string) (int, bool) {
	n := 0
	for _, r := range x.readers {
		key, ok := r.keys[filePathKey(f)]
		for _, in := range r.files {
			if ok && in.Key == key {
				return n, true
			}
			n++
		}
	}
	return 0, false
}

// column is a column of a view as DESCRIBE names it and types it
// (Spark's spelling: timestamp, timestamp_ntz, decimal(10,2)).
type column struct{ name, typ string }

// columnsOf is the columns of view from.
func (x *execution) columnsOf(ctx context.Context, from string) ([]column, error) {
	rows, err := x.queryRows(ctx, "DESCRIBE "+quoteIdent(from))
	if err != nil {
		return nil, err
	}
	var cols []column
	for _, r := range rows {
		name, _ := r[0].(string)
		typ, _ := r[1].(string)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		cols = append(cols, column{name, strings.ToLower(typ)})
	}
	return cols, nil
}

// nullLines sets a CSV sink's nullValue to an empty quoted text when its
// files hold one column and the job names none: Spark's CSV writer drops
// every empty line, so a NULL of a single column (an empty line, as the
// DuckDB engine writes it) would be a row lost. A quoted empty text reads
// back as NULL with DuckDB's and Spark's defaults.
func nullLines(s *engine.Sink, cols []column, opts map[string]string) {
	if s.Format != "csv" {
		return
	}
	if _, ok := opts["nullValue"]; ok {
		return
	}
	n := 0
	for _, c := range cols {
		if !isPartition(s, c.name) {
			n++
		}
	}
	if n == 1 {
		opts["nullValue"] = quoteOf(opts) + quoteOf(opts)
	}
}

func isPartition(s *engine.Sink, name string) bool {
	return slices.ContainsFunc(s.PartitionBy, func(p string) bool { return strings.EqualFold(p, name) })
}

// selectList is what a sink writes of the columns of its view. CSV and
// JSON files get times as the DuckDB engine writes them, as text: Spark's
// writers cut a timestamp to milliseconds (2026-01-02T10:00:00.123Z),
// its cast to text keeps the microseconds and leaves out trailing zeros
// (2026-01-02 10:00:00.12), as DuckDB; an instant, in the session's UTC,
// gets DuckDB's +00. A CSV sink's decimals are written as plain text
// (Spark's writer spells 0.0000000001 as 1E-10). A job that names a
// timestampformat keeps Spark's writing of it. Partition columns become
// folder names: an empty text is written as emptyText (Spark would write
// it into the folder of NULLs), which the folder's respelling makes p=;
// an instant gets its +00 there too.
func selectList(s *engine.Sink, cols []column, opts map[string]string) string {
	_, tsFormat := opts["timestampFormat"]
	out := make([]string, len(cols))
	for i, c := range cols {
		q := quoteIdent(c.name)
		out[i] = q
		switch {
		case isPartition(s, c.name) && c.typ == "string":
			out[i] = fmt.Sprintf("CASE WHEN %s = '' THEN %s ELSE %s END AS %s", q, hexString(emptyText), q, q)
		case isPartition(s, c.name) && c.typ == "timestamp":
			// An instant's folder is named as DuckDB names it, with +00.
			out[i] = fmt.Sprintf("concat(CAST(%s AS STRING), '+00') AS %s", q, q)
		case isPartition(s, c.name):
		case c.typ == "timestamp_ntz" && !tsFormat:
			out[i] = fmt.Sprintf("CAST(%s AS STRING) AS %s", q, q)
		case c.typ == "timestamp" && !tsFormat:
			out[i] = fmt.Sprintf("concat(CAST(%s AS STRING), '+00') AS %s", q, q)
		case strings.HasPrefix(c.typ, "decimal") && s.Format == "csv":
			out[i] = fmt.Sprintf("CAST(%s AS STRING) AS %s", q, q)
		}
	}
	return strings.Join(out, ", ")
}

// write writes the rows of query q under loc (checked by guard) with save
// mode ErrorIfExists.
func (x *execution) write(ctx context.Context, q, format, loc string, opts map[string]string, partitionBy []string) error {
	path, err := sparkPath(loc, false)
	if err != nil {
		return err
	}
	w := map[string]any{
		"input":  map[string]any{"sql": map[string]any{"query": q}},
		"source": format, "path": path, "mode": "SAVE_MODE_ERROR_IF_EXISTS", "options": opts,
	}
	if len(partitionBy) > 0 {
		w["partitioningColumns"] = partitionBy
	}
	js, err := json.Marshal(map[string]any{"writeOperation": w})
	if err != nil {
		return err
	}
	return x.command(ctx, string(js))
}

// staged removes Spark's own files under loc (_SUCCESS, .crc, what a
// committer may leave), then lists the data files with their sizes and
// rows, counted by Spark.
func (x *execution) staged(ctx context.Context, sinkCtx, loc, format string, opts map[string]string) (engine.SinkResult, error) {
	var res engine.SinkResult
	dir, err := engine.LocalPath(loc)
	if err != nil {
		return res, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return res, err
	}
	if err := respellPartitions(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("sink %s: naming partition folders: %w", sinkCtx, err)
	}
	sizes := map[string]int64{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if p != dir && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) && !strings.Contains(name, "=") {
			if d.IsDir() {
				if err := os.RemoveAll(p); err != nil {
					return err
				}
				return fs.SkipDir
			}
			return os.Remove(p)
		}
		if d.IsDir() {
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sizes[filepath.ToSlash(rel)] = st.Size()
		return nil
	})
	if os.IsNotExist(err) {
		return res, nil // nothing written
	}
	if err != nil {
		return res, fmt.Errorf("sink %s: listing what spark wrote: %w", sinkCtx, err)
	}
	rows, err := x.fileRows(ctx, dir, format, opts)
	if err != nil {
		return res, x.wrap(ctx, err, "sink %s: counting rows written", sinkCtx)
	}
	paths := sortedKeys(sizes)
	sort.Strings(paths)
	for _, p := range paths {
		n := rows[p]
		res.Files = append(res.Files, engine.StagedFile{Path: p, Rows: n, Bytes: sizes[p]})
		res.Rows += n
	}
	return res, nil
}

// fileRows counts the rows of each file Spark wrote under dir, by file
// (relative path): Parquet from the footers, JSON Lines by lines, CSV read
// back as written (opts: its delimiter, quote, escape and header), across
// lines, for a quoted text may hold a line break.
func (x *execution) fileRows(ctx context.Context, dir, format string, opts map[string]string) (map[string]int64, error) {
	path, err := sparkPath(dir, true)
	if err != nil {
		return nil, err
	}
	// Files are listed without partition discovery, which refuses an
	// empty text's folder (p=).
	ro := map[string]string{"recursiveFileLookup": "true"}
	reader := "text"
	switch format {
	case "csv":
		reader = "csv"
		ro["multiLine"], ro["header"] = "true", "false"
		for _, k := range []string{"sep", "quote", "escape", "header"} {
			if v, ok := opts[k]; ok {
				ro[k] = v
			}
		}
	case "parquet":
		reader = "parquet"
	}
	name := "_tidemark_written"
	if err := x.createRead(ctx, name, reader, "", ro, []string{path}, true); err != nil {
		return nil, err
	}
	rows, err := x.queryRows(ctx, fmt.Sprintf("SELECT %s, count(*) FROM %s GROUP BY 1", fileCol, name))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, r := range rows {
		fp, _ := r[0].(string)
		u, err := url.Parse(fp)
		if err != nil {
			return nil, fmt.Errorf("spark named the file %q: %w", fp, err)
		}
		rel, err := filepath.Rel(dir, filepath.FromSlash(u.Path))
		if err != nil {
			return nil, err
		}
		out[filepath.ToSlash(rel)] = toInt(r[1])
	}
	return out, nil
}

// canonical returns cols with canonical type texts.
func canonical(cols []bookmark.Column) []bookmark.Column {
	out := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		out[i] = c
		if t, err := bookmark.ParseType(c.Type); err == nil {
			out[i].Type = t.String()
		}
	}
	return out
}
