package runner

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
	"github.com/tidemark-etl/tidemark/engine"
)

// walkStaged lists the data files under dir, '/'-separated and relative
// to it, sorted. Names that start with _ or . are not data: Spark's and
// Hadoop's _SUCCESS, _temporary/, .part-*.crc, and their like.
func walkStaged(dir string) ([]engine.StagedFile, error) {
	var out []engine.StagedFile
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
		out = append(out, engine.StagedFile{Path: filepath.ToSlash(rel), Bytes: info.Size()})
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
