package engine

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/klauspost/compress/zstd"
)

// Files a program other than an engine wrote or reads (a Glue-style
// script's): what it staged for a sink, with each file's rows, and the
// rows of the input it was handed. The engine side owns these counts; the
// runner only records them.

// walkStaged lists the data files under dir, '/'-separated and relative
// to it, sorted. Names that start with _ or . are not data: Spark's and
// Hadoop's _SUCCESS, _temporary/, .part-*.crc, and their like.
func walkStaged(dir string) ([]StagedFile, error) {
	var out []StagedFile
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the program wrote nothing
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, "_") && !strings.Contains(name, "=") || strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, StagedFile{Path: filepath.ToSlash(rel), Bytes: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// countRows counts the rows of one written file: from a Parquet file's
// footer, or the records of a CSV (less its header line) or JSON Lines
// file, compressed or not.
func countRows(path, format string, header bool) (int64, error) {
	if format == "parquet" {
		r, err := file.OpenParquetFile(path, false)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		return r.NumRows(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var in io.Reader = bufio.NewReaderSize(f, 1<<20)
	switch {
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(in)
		if err != nil {
			return 0, err
		}
		defer zr.Close()
		in = zr
	case strings.HasSuffix(path, ".zst"):
		zr, err := zstd.NewReader(in)
		if err != nil {
			return 0, err
		}
		defer zr.Close()
		in = zr
	}
	lines, err := countLines(in)
	if err != nil {
		return 0, err
	}
	if format == "csv" && header && lines > 0 {
		lines--
	}
	return lines, nil
}

// countLines counts the lines of r that hold anything. A CSV field holding
// a line break would count twice; Spark quotes such fields, and the count
// is for the run summary only.
func countLines(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	inLine := false
	for {
		k, err := r.Read(buf)
		for _, c := range buf[:k] {
			switch {
			case c == '\n':
				if inLine {
					n++
				}
				inLine = false
			case c != '\r':
				inLine = true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if inLine {
		n++
	}
	return n, nil
}

// Written lists what a program wrote under a sink's local staging
// folder, leaving out what Spark and Hadoop write beside the data
// (_SUCCESS, .crc files, _temporary, any _ or . name).
func Written(t Sink) ([]StagedFile, int64, error) {
	dir, err := LocalPath(t.Location)
	if err != nil {
		return nil, 0, err
	}
	files, err := walkStaged(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("listing what was written for sink %s under %s: %w", t.Ctx, dir, err)
	}
	var rows int64
	for i := range files {
		n, err := countRows(filepath.Join(dir, filepath.FromSlash(files[i].Path)), t.Format, headerOption(t.Options, true))
		if err != nil {
			return nil, 0, fmt.Errorf("sink %s: reading %s: %w", t.Ctx, files[i].Path, err)
		}
		files[i].Rows = n
		rows += n
	}
	// A writer that had no rows may still leave a file with none (Spark
	// does, per empty partition): such a file is no output.
	kept := files[:0]
	for _, f := range files {
		if f.Rows > 0 {
			kept = append(kept, f)
		}
	}
	return kept, rows, nil
}

// headerOption reads a CSV sink's or source's header option: def when
// not set (a file sink writes a header; Spark and Glue read none).
func headerOption(opts map[string]any, def bool) bool {
	switch v := opts["header"].(type) {
	case bool:
		return v
	case string:
		return v != "false"
	}
	return def
}

// InputRows counts the rows of a source's input files, as Written counts
// a sink's: what a run that handed them to a program read. A CSV file has
// a header line only if its options say so (header), as Spark reads it. Only local
// files can be counted; known is false when one is not (the program
// reads it itself from a remote store).
func InputRows(s Source) (rows int64, known bool, err error) {
	for _, in := range s.Files {
		p, err := LocalPath(in.Location)
		if err != nil {
			return 0, false, nil
		}
		n, err := countRows(p, s.Format, headerOption(s.Options, false))
		if err != nil {
			return 0, false, fmt.Errorf("source %s: counting the rows of %s: %w", s.Ctx, in.Key, err)
		}
		rows += n
	}
	return rows, true, nil
}
