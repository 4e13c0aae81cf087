package duckdb

import (
	"bufio"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// CSV columns by name. DuckDB's read_csv with columns={...} maps columns by
// position: a file whose header lists the same columns in another order
// would be read with values in the wrong columns, and a header with other
// names would be accepted (union_by_name does not help: with columns it is
// positional too, and with types it sniffs every file and fills missing
// columns with NULL). So the engine reads each file's header itself (its
// first record, a few hundred bytes), groups the files by header, and reads
// each group with the columns in that group's order; the view's projection
// then puts them in schema order by name. A header that names a column the
// schema lacks, or lacks one of the schema's, fails the run naming file and
// column. Headerless files (header: false) and files read with the names
// option stay positional.
//
// A header that parses plainly gives the names directly (no DuckDB call);
// one that does not, or that has an empty name, or a source read with
// normalize_names, is named by DuckDB from one file of the group (its rules
// for those cases), so the comparison is with the names DuckDB would give.

// readChunk is one read call: at most chunkFiles files sharing one column
// order.
type readChunk struct {
	paths []string
	cols  []bookmark.Column // file columns in the files' order
}

// maxHeaderBytes bounds how much of a file is read for its header.
const maxHeaderBytes = 1 << 20

// byName reports whether the source's CSV columns are mapped by header name.
func (r *reader) byName() bool {
	return r.src.Format == "csv" && !r.src.Stream && r.dialect.boolean("header", true) &&
		!r.opts.has("names") && len(r.data) > 0
}

// groupByHeader reads every file's header and settles r.chunkList.
func (r *reader) groupByHeader(ctx context.Context, c *sql.Conn) error {
	r.chunkList = nil
	if !r.byName() {
		for _, p := range r.in.chunks() {
			r.chunkList = append(r.chunkList, readChunk{paths: p, cols: r.data})
		}
		return nil
	}
	type group struct {
		cols  []bookmark.Column
		paths []string
	}
	groups := map[string]*group{}
	var order []*group
	for i, p := range r.in.paths {
		h, err := readHeader(p, r.dialect, r.opts)
		if err != nil {
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keys[i], Line: 1, Msg: "reading the header: " + err.Error()}
		}
		g, ok := groups[h.raw]
		if !ok {
			names := h.names
			asked := false
			if names == nil || r.opts.boolean("normalize_names", false) || slices.Contains(names, "") {
				// DuckDB's rules decide; a file it cannot sniff keeps
				// the names read here, if any.
				if dn, err := r.duckNames(ctx, c, p); err == nil || names == nil {
					if err != nil {
						return err
					}
					names, asked = dn, true
				}
			}
			cols, err := r.mapHeader(names, r.in.keys[i])
			if err != nil && !asked {
				// Before failing, DuckDB's own reading of the header.
				if dn, derr := r.duckNames(ctx, c, p); derr == nil {
					if dcols, derr := r.mapHeader(dn, r.in.keys[i]); derr == nil {
						cols, err = dcols, nil
					}
				}
			}
			if err != nil {
				return err
			}
			g = &group{cols: cols}
			groups[h.raw] = g
			order = append(order, g)
		}
		g.paths = append(g.paths, p)
	}
	for _, g := range order {
		for i := 0; i < len(g.paths); i += chunkFiles {
			r.chunkList = append(r.chunkList, readChunk{paths: g.paths[i:min(i+chunkFiles, len(g.paths))], cols: g.cols})
		}
	}
	return nil
}

// duckNames asks DuckDB for the column names of the CSV file at path, read
// with the settled dialect.
func (r *reader) duckNames(ctx context.Context, c *sql.Conn, path string) ([]string, error) {
	q := fmt.Sprintf("SELECT * FROM read_csv(%s, all_varchar=true, sample_size=1, ignore_errors=true%s%s, hive_partitioning=false)",
		literal(path), namedArgs(r.dialect, nil),
		namedArgs(r.opts, func(o option) bool {
			return r.dialect.has(o.name) || (o.spec.inferOnly && o.name != "normalize_names")
		}))
	cols, err := describe(ctx, c, q)
	if err != nil {
		return nil, wrap(ctx, err, []*reader{r}, "source %s: reading the header of %s", r.src.Ctx, r.in.keyOf(path))
	}
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	return names, nil
}

// mapHeader returns the schema's file columns in the order of a header's
// names, or an error naming the file and the first column that does not
// match. Names compare as DuckDB identifiers do, ignoring case.
func (r *reader) mapHeader(names []string, key string) ([]bookmark.Column, error) {
	byLower := make(map[string]int, len(r.data))
	for i, c := range r.data {
		byLower[strings.ToLower(c.Name)] = i
	}
	used := make([]bool, len(r.data))
	cols := make([]bookmark.Column, 0, len(names))
	extra := map[string]bool{}
	for _, n := range names {
		i, ok := byLower[strings.ToLower(n)]
		if !ok && r.evolving() {
			// A new column: evolve.go decides what it becomes.
			if extra[strings.ToLower(n)] {
				return nil, &engine.InputError{Source: r.src.Ctx, File: key, Line: 1, Column: n,
					Msg: fmt.Sprintf("the header names column %s twice", clip(n))}
			}
			extra[strings.ToLower(n)] = true
			cols = append(cols, bookmark.Column{Name: n, Type: "VARCHAR"})
			continue
		}
		if !ok {
			return nil, &engine.InputError{Source: r.src.Ctx, File: key, Line: 1, Column: n,
				Msg: fmt.Sprintf("the header has column %s, which is not in the source's schema %s "+
					"(files are matched to the schema by column name; set the source's schema_evolution to "+
					"add_new_columns, rescue or none to read new columns)", clip(n), schemaNames(r.data))}
		}
		if used[i] {
			return nil, &engine.InputError{Source: r.src.Ctx, File: key, Line: 1, Column: n,
				Msg: fmt.Sprintf("the header names column %s twice", clip(n))}
		}
		used[i] = true
		cols = append(cols, r.data[i])
	}
	for i, u := range used {
		if !u && !r.evolving() { // evolving: a missing column is NULL
			return nil, &engine.InputError{Source: r.src.Ctx, File: key, Line: 1, Column: r.data[i].Name,
				Msg: fmt.Sprintf("the header lacks column %s of the source's schema %s", r.data[i].Name, schemaNames(r.data))}
		}
	}
	return cols, nil
}

func schemaNames(cols []bookmark.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// header is a CSV file's header as read in Go.
type header struct {
	// raw is every byte up to and including the header record (the skipped
	// leading lines too): files with equal raw have equal headers.
	raw string
	// names are the header's fields, unquoted; nil when the header did not
	// parse plainly (then DuckDB names the columns).
	names []string
}

// readHeader reads the header record of the CSV file at path: it skips the
// dialect's skip lines, then lines that are empty or comments (which make
// the names DuckDB's to decide), and reads one record, quoted newlines
// included, of at most maxHeaderBytes.
func readHeader(path string, d, opts options) (header, error) {
	f, err := os.Open(path)
	if err != nil {
		return header{}, err
	}
	defer f.Close()
	rd, closer, err := decompress(f, path, opts)
	if err != nil {
		return header{}, err
	}
	defer closer()
	br := bufio.NewReaderSize(io.LimitReader(rd, maxHeaderBytes+1), 4096)
	var raw strings.Builder
	readLine := func() (string, error) {
		line, err := br.ReadString('\n')
		raw.WriteString(line)
		if raw.Len() > maxHeaderBytes {
			return "", fmt.Errorf("no header record within the first %d bytes", maxHeaderBytes)
		}
		if err == io.EOF && line != "" {
			err = nil
		}
		return line, err
	}
	skip, _ := d["skip"].value.(int64)
	for range skip {
		if _, err := readLine(); err != nil {
			return header{raw: raw.String()}, nil // DuckDB reads no header either
		}
	}
	comment, _ := d.str("comment")
	plain := true
	var line string
	for {
		if line, err = readLine(); err != nil {
			return header{raw: raw.String()}, nil
		}
		t := strings.TrimRight(line, "\r\n")
		if t != "" && (comment == "" || !strings.HasPrefix(t, comment)) {
			break
		}
		plain = false
	}
	delim, _ := d.str("delim")
	quote, _ := d.str("quote")
	escape, _ := d.str("escape")
	rec := line
	for {
		fields, complete := splitRecord(strings.TrimSuffix(rec, "\n"), delim, quote, escape)
		if complete {
			h := header{raw: raw.String()}
			enc, _ := opts.str("encoding")
			if plain && fields != nil && (enc == "" || enc == "utf-8") && utf8.ValidString(rec) {
				if len(fields) > 0 {
					last := len(fields) - 1
					fields[last] = strings.TrimSuffix(fields[last], "\r")
					fields[0] = strings.TrimPrefix(fields[0], "\uFEFF")
				}
				for i, f := range fields { // DuckDB trims names
					fields[i] = strings.Trim(f, " \t")
				}
				h.names = fields
			}
			return h, nil
		}
		next, err := readLine()
		if err != nil {
			return header{raw: raw.String()}, nil
		}
		rec += next
	}
}

// splitRecord splits one CSV record into unquoted fields. complete is false
// while a quote is open at the end; fields is nil when the record is not
// plain (text after a closing quote).
func splitRecord(rec, delim, quote, escape string) (fields []string, complete bool) {
	if delim == "" {
		return nil, true
	}
	var cur strings.Builder
	i := 0
	for {
		// One field starts at i.
		cur.Reset()
		if quote != "" && strings.HasPrefix(rec[i:], quote) {
			i += len(quote)
			closed := false
			for i < len(rec) {
				switch {
				case escape != "" && strings.HasPrefix(rec[i:], escape) && strings.HasPrefix(rec[i+len(escape):], quote):
					cur.WriteString(quote)
					i += len(escape) + len(quote)
				case escape != "" && escape != quote && strings.HasPrefix(rec[i:], escape) && strings.HasPrefix(rec[i+len(escape):], escape):
					cur.WriteString(escape)
					i += 2 * len(escape)
				case strings.HasPrefix(rec[i:], quote):
					i += len(quote)
					closed = true
				default:
					cur.WriteByte(rec[i])
					i++
				}
				if closed {
					break
				}
			}
			if !closed {
				return nil, false
			}
			fields = append(fields, cur.String())
			switch {
			case i == len(rec) || rec[i:] == "\r":
				return fields, true
			case strings.HasPrefix(rec[i:], delim):
				i += len(delim)
				continue
			default:
				return nil, true
			}
		}
		end := strings.Index(rec[i:], delim)
		if end < 0 {
			return append(fields, rec[i:]), true
		}
		fields = append(fields, rec[i:i+end])
		i += end + len(delim)
	}
}

// decompress wraps f by the compression option, else by path's suffix.
func decompress(f io.Reader, path string, opts options) (io.Reader, func(), error) {
	kind, _ := opts.str("compression")
	if kind == "" || kind == "auto" {
		switch compressionSuffix(path) {
		case ".gz", ".gzip":
			kind = "gzip"
		case ".zst", ".zstd":
			kind = "zstd"
		}
	}
	switch kind {
	case "gzip":
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, err
		}
		return zr, func() { zr.Close() }, nil
	case "zstd":
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, err
		}
		return zr, zr.Close, nil
	}
	return f, func() {}, nil
}
