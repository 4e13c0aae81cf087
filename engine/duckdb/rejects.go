package duckdb

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
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
		parts[i] = fmt.Sprintf(`SELECT s.file_path, e.line, e.line_byte_position, e.column_name, e.error_type, e.error_message, e.csv_line
			FROM %s e JOIN %s s USING (scan_id, file_id)`, ident(r.rejectsTable(i)), ident(r.rejectsScan(i)))
	}
	q := fmt.Sprintf(`SELECT file_path, line::BIGINT, coalesce(string_agg(DISTINCT column_name, ', '), ''),
		string_agg(error_type || ': ' || error_message, '; '), coalesce(any_value(csv_line), ''),
		coalesce(min(line_byte_position), -1)::BIGINT
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
		var offset int64
		if err := rows.Scan(&path, &rj.line, &rj.column, &rj.err, &rj.raw, &offset); err != nil {
			return nil, err
		}
		rj.file, rj.order = r.in.keyOf(path), order[path]
		if r.src.Format == "csv" && strings.Contains(rj.err, "unterminated quote") && strings.ContainsAny(rj.raw, "\r\n") {
			// The quote would take every line up to the end of the file
			// into this one rejected record.
			return nil, &engine.InputError{Source: r.src.Ctx, File: rj.file, Line: rj.line, Column: rj.column,
				Msg: fmt.Sprintf("a quote opened on this line is not closed: the %d lines after it would be "+
					"one rejected record; fix the quote (or set quote: '' if the file does not quote)", strings.Count(rj.raw, "\n"))}
		}
		// The raw bytes, where DuckDB's copy replaced invalid UTF-8.
		if !r.src.Stream && offset >= 0 {
			rj.raw = rawRecord(path, r.opts, offset, rj.raw)
		}
		out = append(out, rj)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(ctx, err, nil, "source %s: reading rejected rows", r.src.Ctx)
	}
	kept, err := x.collectBadValues(ctx, r, order, out)
	if err != nil {
		return nil, err
	}
	out = append(out, kept...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].order != out[j].order {
			return out[i].order < out[j].order
		}
		return out[i].line < out[j].line
	})
	return out, nil
}

// collectBadValues returns the rows of a kept read (r.table) whose values
// do not fit their types, with the lines and raw bytes found in their files;
// rejected are the reader's own rejects, whose lines are passed over.
func (x *execution) collectBadValues(ctx context.Context, r *reader, order map[string]int, rejected []reject) ([]reject, error) {
	if r.table == "" {
		return nil, nil
	}
	var whens []string
	for _, col := range r.data {
		if r.checked[col.Name] != nil {
			whens = append(whens, fmt.Sprintf("WHEN %s THEN left(%s, %d)", literal(col.Name), r.textSQL(col.Name), maxValueText))
		}
	}
	q := fmt.Sprintf("SELECT %s, %s, CASE %s %s END FROM %s WHERE %s IS NOT NULL",
		ident(fileColumn), ident(badColumn), ident(badColumn), strings.Join(whens, " "), r.table, ident(badColumn))
	rows, err := x.c.QueryContext(ctx, q)
	if err != nil {
		return nil, wrap(ctx, err, nil, "source %s: reading values that do not fit", r.src.Ctx)
	}
	byFile := map[string][]badValue{}
	var files []string
	for rows.Next() {
		var path, col string
		var value sql.NullString
		if err := rows.Scan(&path, &col, &value); err != nil {
			rows.Close()
			return nil, err
		}
		if byFile[path] == nil {
			files = append(files, path)
		}
		byFile[path] = append(byFile[path], badValue{col: col, value: value.String})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	skip := map[string]map[int64]bool{} // read path -> lines the reader rejected
	for _, rj := range rejected {
		for _, p := range r.in.paths {
			if r.in.keyOf(p) == rj.file {
				if skip[p] == nil {
					skip[p] = map[int64]bool{}
				}
				skip[p][rj.line] = true
			}
		}
	}
	var out []reject
	for _, path := range files {
		want := byFile[path]
		var found []foundValue
		if !r.src.Stream { // a named pipe cannot be read again
			var err error
			if found, err = r.findValues(path, want, skip[path]); err != nil {
				return nil, fmt.Errorf("source %s: %s: %w", r.src.Ctx, r.in.keyOf(path), err)
			}
		}
		left := map[badValue]int{}
		for _, w := range want {
			left[w]++
		}
		add := func(w badValue, line int64, raw string) {
			c := r.checked[w.col]
			out = append(out, reject{file: r.in.keyOf(path), order: order[path], line: line, column: w.col, raw: raw,
				err: fmt.Sprintf("VALUE: value %q does not convert to the column's type %s without loss: %s", clip(w.value), c.typ, c.why(w.value))})
		}
		for _, f := range found {
			left[f.badValue]--
			add(f.badValue, f.line, f.raw)
		}
		for _, w := range want {
			if left[w] > 0 { // not found again: no line, the value as raw
				left[w]--
				add(w, 0, w.value)
			}
		}
	}
	return out, nil
}

// quarantine writes rejected rows as CSV (file, line, column, error, raw)
// into Rejects/<source>/rejects.csv; when a previous Execute already
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
