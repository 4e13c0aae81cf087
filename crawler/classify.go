package crawler

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/objstore"
)

// shape is what a file was classified as: its format, compression,
// reader options and columns.
type shape struct {
	Format      string // csv, json, parquet
	Compression string // "", gzip, zstd
	Options     map[string]string
	Schema      schema
	// A CSV file read without a header keeps its first record, and the
	// types of the records after it, in case another file shows that
	// record is a header.
	first []string
	rest  schema
}

// kind identifies the reader a shape needs: format, compression and
// options, not columns.
func (s shape) kind() string {
	var b strings.Builder
	b.WriteString(s.Format)
	if s.Compression != "" {
		b.WriteString("+" + s.Compression)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Options)) {
		fmt.Fprintf(&b, " %s=%q", k, s.Options[k])
	}
	return b.String()
}

// describe names the shape for people: "csv (delim ',', header)".
func (s shape) describe() string {
	d := s.Format
	if s.Compression != "" {
		d += "." + s.Compression
	}
	if s.Format == "csv" {
		h := "no header"
		if s.Options["header"] == "true" {
			h = "header"
		}
		d += fmt.Sprintf(" (delimiter %q, %s)", s.Options["delim"], h)
	}
	return d
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// reading counts what a crawl opened and read.
type reading struct {
	files int64
	bytes int64
}

// classify opens one file and tells its shape by its content, reading at
// most limit bytes of it (and of its decompressed content): the start of
// a text file, or the end of a Parquet file (its footer). Its error is
// why the file cannot be a table's (a reason to skip it), or an I/O error
// (errIO).
func classify(ctx context.Context, st objstore.Store, o objstore.Object, limit int64, n *reading) (shape, error) {
	if o.Size == 0 {
		return shape{}, errors.New("empty file")
	}
	n.files++
	head, err := objstore.ReadRange(ctx, st, o.Key, 0, min(limit, o.Size))
	if err != nil {
		return shape{}, &ioError{err}
	}
	n.bytes += int64(len(head))
	if bytes.HasPrefix(head, parquetMagic) {
		return classifyParquet(ctx, st, o, head, limit, n)
	}
	text, complete := head, int64(len(head)) == o.Size
	compression := ""
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		compression = "gzip"
		text, complete, err = inflate(head, complete, limit, func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) })
	case bytes.HasPrefix(head, zstdMagic):
		compression = "zstd"
		text, complete, err = inflate(head, complete, limit, func(r io.Reader) (io.Reader, error) { return zstd.NewReader(r) })
	}
	if err != nil {
		return shape{}, fmt.Errorf("%s: %v", compression, err)
	}
	s, err := classifyText(text, complete)
	if err != nil {
		return shape{}, err
	}
	s.Compression = compression
	return s, nil
}

// classifyText tells JSON Lines from CSV.
func classifyText(text []byte, complete bool) (shape, error) {
	switch {
	case bytes.HasPrefix(text, parquetMagic):
		return shape{}, errors.New("a compressed Parquet file (Parquet compresses inside; readers do not unpack it)")
	case bytes.IndexByte(text, 0) >= 0:
		return shape{}, errors.New("binary content: not CSV, JSON Lines or Parquet")
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return shape{}, errors.New("only blank lines")
	case trimmed[0] == '{':
		s, err := sniffJSONLines(text, complete)
		if err != nil {
			return shape{}, fmt.Errorf("starts like JSON Lines, but %v", err)
		}
		return s, nil
	case trimmed[0] == '[':
		return shape{}, errors.New("a JSON document (an array), not JSON Lines (one object per line)")
	}
	return sniffCSV(text, complete)
}

// inflate decompresses the start of a compressed file, at most limit
// bytes; complete when it is the whole content.
func inflate(head []byte, whole bool, limit int64, open func(io.Reader) (io.Reader, error)) ([]byte, bool, error) {
	r, err := open(bytes.NewReader(head))
	if err != nil {
		return nil, false, err
	}
	if c, ok := r.(interface{ Close() }); ok {
		defer c.Close()
	}
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	switch {
	case int64(len(out)) > limit:
		return out[:limit], false, nil
	case err == nil:
		return out, whole, nil
	case !whole && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)):
		// The sample ends inside the compressed stream.
		return out, false, nil
	case len(out) > 0 && !whole:
		return out, false, nil
	}
	return nil, false, err
}

// classifyParquet reads a Parquet file's footer: its last 8 bytes, then
// the footer from its start, at most limit bytes (the schema comes first).
// A file that head holds whole is not read again.
func classifyParquet(ctx context.Context, st objstore.Store, o objstore.Object, head []byte, limit int64, n *reading) (shape, error) {
	if o.Size < 12 {
		return shape{}, errors.New("too short for Parquet")
	}
	whole := int64(len(head)) == o.Size
	read := func(off, size int64) ([]byte, error) {
		if whole {
			return head[off:min(off+size, o.Size)], nil
		}
		b, err := objstore.ReadRange(ctx, st, o.Key, off, size)
		if err != nil {
			return nil, &ioError{err}
		}
		n.bytes += int64(len(b))
		return b, nil
	}
	tail, err := read(o.Size-8, 8)
	if err != nil {
		return shape{}, err
	}
	off, size, err := parquetFooterSpan(tail, o.Size)
	if err != nil {
		return shape{}, err
	}
	footer, err := read(off, min(size, limit))
	if err != nil {
		return shape{}, err
	}
	s, err := parquetSchema(footer)
	if err != nil {
		return shape{}, err
	}
	return shape{Format: "parquet", Schema: s}, nil
}

// ioError is a file that could not be read: the crawl fails, it is not a
// reason to skip the file.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }
