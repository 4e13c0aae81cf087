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
	if err := x.write(ctx, q, s.Format, s.Location, opts, s.PartitionBy); err != nil {
		return engine.SinkResult{}, x.wrap(ctx, err, "sink %s: writing", s.Ctx)
	}
	return x.staged(ctx, s.Ctx, s.Location, s.Format, opts["header"] == "true")
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
func (x *execution) staged(ctx context.Context, sinkCtx, loc, format string, header bool) (engine.SinkResult, error) {
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
	rows, err := x.fileRows(ctx, dir, format, header)
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
// (relative path): Parquet from the footers, CSV and JSON Lines by lines
// (less a header line per CSV file with a header).
func (x *execution) fileRows(ctx context.Context, dir, format string, header bool) (map[string]int64, error) {
	path, err := sparkPath(dir, true)
	if err != nil {
		return nil, err
	}
	reader := "text"
	if format == "parquet" {
		reader = "parquet"
	}
	rows, err := x.queryRows(ctx, fmt.Sprintf("SELECT _metadata.file_path, count(*) FROM %s.%s GROUP BY 1", reader, quoteIdent(path)))
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
		n := toInt(r[1])
		if header && format == "csv" && n > 0 {
			n--
		}
		out[filepath.ToSlash(rel)] = n
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
