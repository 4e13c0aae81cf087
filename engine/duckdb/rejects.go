package duckdb

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// reject is one rejected input row: DuckDB may report several errors for
// one line (a bad cast and a surplus column); they are joined.
type reject struct {
	file   string // key
	order  int    // the file's position in the plan, to sort by
	line   int64
	column string
	err    string
	raw    string
}

// rejectsHeader is the header of a quarantine file.
var rejectsHeader = []string{"file", "line", "column", "error", "raw"}

// collectRejects reads the rejects tables of a CSV source read with
// ignore_errors and store_rejects, one table pair per chunk.
func (x *execution) collectRejects(ctx context.Context, r *reader) ([]reject, error) {
	n := len(r.chunkList)
	if n == 0 || !r.rejects {
		return nil, nil
	}
	parts := make([]string, n)
	for i := range n {
		parts[i] = fmt.Sprintf(`SELECT s.file_path, e.line, e.column_name, e.error_type, e.error_message, e.csv_line
			FROM %s e JOIN %s s USING (scan_id, file_id)`, ident(r.rejectsTable(i)), ident(r.rejectsScan(i)))
	}
	q := fmt.Sprintf(`SELECT file_path, line::BIGINT, coalesce(string_agg(DISTINCT column_name, ', '), ''),
		string_agg(error_type || ': ' || error_message, '; '), coalesce(any_value(csv_line), '')
		FROM (%s) GROUP BY file_path, line`, strings.Join(parts, " UNION ALL "))
	rows, err := x.c.QueryContext(ctx, q)
	if err != nil {
		return nil, wrap(ctx, err, nil, "source %s: reading rejected rows", r.src.Ctx)
	}
	defer rows.Close()
	order := make(map[string]int, len(r.in.paths))
	for i, p := range r.in.paths {
		order[p] = i
	}
	var out []reject
	for rows.Next() {
		var rj reject
		var path string
		if err := rows.Scan(&path, &rj.line, &rj.column, &rj.err, &rj.raw); err != nil {
			return nil, err
		}
		rj.file, rj.order = r.in.keyOf(path), order[path]
		out = append(out, rj)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, err, nil, "source %s: reading rejected rows", r.src.Ctx)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].order != out[j].order {
			return out[i].order < out[j].order
		}
		return out[i].line < out[j].line
	})
	return out, nil
}

// quarantine writes rejected rows as CSV (file, line, column, error, raw)
// into RejectsDir/<source>/rejects.csv; when a previous Execute already
// wrote that name, the next free rejects-<n>.csv.
func quarantine(dir, source string, rows []reject) (string, error) {
	if len(rows) == 0 {
		return "", nil
	}
	folder := filepath.Join(dir, source)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", fmt.Errorf("source %s: creating %s: %w", source, folder, err)
	}
	var f *os.File
	var name string
	for i := 1; f == nil; i++ {
		name = "rejects.csv"
		if i > 1 {
			name = fmt.Sprintf("rejects-%d.csv", i)
		}
		var err error
		f, err = os.OpenFile(filepath.Join(folder, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("source %s: writing rejects: %w", source, err)
		}
	}
	w := csv.NewWriter(f)
	_ = w.Write(rejectsHeader)
	for _, rj := range rows {
		_ = w.Write([]string{rj.file, fmt.Sprint(rj.line), rj.column, rj.err, rj.raw})
	}
	w.Flush()
	err := w.Error()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("source %s: writing rejects: %w", source, err)
	}
	return filepath.Join(folder, name), nil
}
