package duckdb

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// headerDelim reads the first line of the CSV file at path and reports
// whether it is exactly the schema's file columns (those that are not
// partition folders) joined by one of the usual delimiters, and by which.
// Any doubt (quoted names, a different header, an unreadable file) answers
// false, and the caller falls back to DuckDB's sniffer.
func headerDelim(path string, schema []bookmark.Column, hiveKeys []string) (string, bool) {
	var names []string
	for _, c := range schema {
		if !containsFold(hiveKeys, c.Name) {
			names = append(names, c.Name)
		}
	}
	line, ok := firstLine(path)
	if !ok || len(names) == 0 {
		return "", false
	}
	for _, d := range []string{",", ";", "\t", "|"} {
		if line == strings.Join(names, d) {
			if len(names) == 1 {
				return ",", true // any delimiter reads one column; keep the default
			}
			return d, true
		}
	}
	return "", false
}

// firstLine returns the first line of a possibly compressed file, without
// its line ending; at most 64 KiB are read.
func firstLine(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var r io.Reader = f
	switch compressionSuffix(path) {
	case ".gz", ".gzip":
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", false
		}
		defer zr.Close()
		r = zr
	case ".zst", ".zstd":
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return "", false
		}
		defer zr.Close()
		r = zr
	}
	line, err := bufio.NewReaderSize(io.LimitReader(r, 64<<10), 64<<10).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", false
	}
	if !strings.HasSuffix(line, "\n") && err != io.EOF {
		return "", false
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	line = strings.TrimPrefix(line, "\uFEFF")
	return line, line != ""
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
