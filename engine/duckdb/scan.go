package duckdb

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// Reading input again in Go, on paths that report bad records only: to
// find the line of a value that does not fit its type (DuckDB numbers only
// the lines its reader rejects) and to quarantine rejected rows with their
// raw bytes (DuckDB's rejects table holds them as text, an invalid byte
// replaced by '?').

// maxValueText is how much of a value that does not fit the error carries
// back, to be found in the file.
const maxValueText = 4096

// maxRecordBytes bounds one record read here.
const maxRecordBytes = 64 << 20

// badValue is a value that did not fit, to be found in its file.
type badValue struct {
	col, value string
}

// foundValue is where a badValue is: its record's first line and bytes.
type foundValue struct {
	badValue
	line int64
	raw  string
}

// findValues finds each of want in the file at path (a read path of r),
// each occurrence once, in file order, passing over the records that start
// on the lines in skip.
func (r *reader) findValues(path string, want []badValue, skip map[int64]bool) ([]foundValue, error) {
	left := map[badValue]int{}
	for _, w := range want {
		left[r.matchKey(w)]++
	}
	var out []foundValue
	match := func(line int64, raw, col, text string) {
		if skip[line] {
			return
		}
		k := badValue{col: col, value: text}
		if len(text) > maxValueText {
			k.value = text[:maxValueText]
		}
		if m := r.matchKey(k); left[m] > 0 {
			left[m]--
			out = append(out, foundValue{badValue: k, line: line, raw: raw})
		}
	}
	if r.src.Format == "json" {
		err := scanLines(path, r.opts, func(line int64, raw string) bool {
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(raw), &obj) != nil {
				return true
			}
			for col := range r.checked {
				if v, ok := obj[col]; ok {
					match(line, raw, col, jsonText(v))
				}
			}
			return len(out) < len(want)
		})
		return out, err
	}
	cols := r.colsOf(path)
	err := r.scanCSV(path, func(line int64, raw string, fields []string) bool {
		if len(fields) != len(cols) {
			return true
		}
		for i, c := range cols {
			if r.checked[c.Name] != nil {
				match(line, raw, c.Name, fields[i])
			}
		}
		return len(out) < len(want)
	})
	return out, err
}

// matchKey is what a bad value is matched on: for JSON, whose numbers
// DuckDB renders in its own way, a number's value.
func (r *reader) matchKey(v badValue) badValue {
	if r.src.Format != "json" {
		return v
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(v.value), 64); err == nil {
		v.value = "\x00" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return v
}

// jsonText is a JSON value as textSQL renders it: a string's contents, a
// number's text.
func jsonText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(v))
}

// colsOf is the file columns of a CSV read path in the file's order.
func (r *reader) colsOf(path string) []bookmark.Column {
	for _, c := range r.chunkList {
		for _, p := range c.paths {
			if p == path {
				return c.cols
			}
		}
	}
	return r.data
}

// scanCSV calls fn with each record after the skipped lines and the
// header: the line it starts on, its bytes without the line ending, and its
// fields (nil when it does not split plainly). fn returns false to stop.
func (r *reader) scanCSV(path string, fn func(line int64, raw string, fields []string) bool) error {
	delim, _ := r.dialect.str("delim")
	quote, _ := r.dialect.str("quote")
	escape, _ := r.dialect.str("escape")
	comment, _ := r.dialect.str("comment")
	skip, _ := r.dialect["skip"].value.(int64)
	header := r.dialect.boolean("header", true)
	var pending strings.Builder
	var start int64
	return scanLines(path, r.opts, func(line int64, raw string) bool {
		if line <= skip {
			return true
		}
		if pending.Len() == 0 {
			if raw == "" || (comment != "" && strings.HasPrefix(raw, comment)) {
				return true
			}
			start = line
		} else {
			pending.WriteByte('\n')
		}
		pending.WriteString(raw)
		rec := pending.String()
		fields, complete := splitRecord(rec, delim, quote, escape)
		if !complete && pending.Len() < maxRecordBytes {
			return true
		}
		pending.Reset()
		if header {
			header = false
			return true
		}
		return fn(start, rec, fields)
	})
}

// scanLines calls fn with each line of a possibly compressed file, without
// its line ending, numbered from 1.
func scanLines(path string, opts options, fn func(line int64, raw string) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd, closer, err := decompress(f, path, opts)
	if err != nil {
		return err
	}
	defer closer()
	br := bufio.NewReaderSize(rd, 64<<10)
	for n := int64(1); ; n++ {
		line, err := br.ReadString('\n')
		if line == "" && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return err
		}
		if !fn(n, strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")) || err == io.EOF {
			return nil
		}
	}
}

// recordLine returns the number of the line of the JSON Lines file at
// path that holds its nth record, blank lines (spaces, tabs) not counted
// as DuckDB's reader counts; 0 when the file has fewer.
func recordLine(path string, opts options, n int64) (int64, error) {
	var found, seen int64
	err := scanLines(path, opts, func(line int64, raw string) bool {
		if strings.Trim(raw, " \t\r") != "" {
			if seen++; seen == n {
				found = line
			}
		}
		return found == 0
	})
	return found, err
}

// rawRecord returns the raw bytes of a rejected row that DuckDB reports at
// offset (its line_byte_position, one past the line's start in DuckDB 1.5)
// as text, where an invalid byte became '?'; the text itself when the
// bytes there do not match it.
func rawRecord(path string, opts options, offset int64, text string) string {
	for _, at := range []int64{offset - 1, offset} {
		if at < 0 {
			continue
		}
		raw, err := rawBytes(path, opts, at, int64(len(text)))
		if err == nil && sameButReplaced(raw, text) {
			return raw
		}
	}
	return text
}

// sameButReplaced reports whether text is raw with some bytes replaced by
// '?', and differs from it only there.
func sameButReplaced(raw, text string) bool {
	if len(raw) != len(text) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != text[i] && text[i] != '?' {
			return false
		}
	}
	return true
}

// rawBytes reads n bytes at offset of a possibly compressed file: the raw
// bytes of a rejected row that DuckDB reports by position.
func rawBytes(path string, opts options, offset, n int64) (string, error) {
	if n <= 0 || n > maxRecordBytes {
		return "", fmt.Errorf("record of %d bytes", n)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	rd, closer, err := decompress(f, path, opts)
	if err != nil {
		return "", err
	}
	defer closer()
	if _, err := io.CopyN(io.Discard, rd, offset); err != nil {
		return "", err
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rd, buf); err != nil {
		return "", err
	}
	return string(buf), nil
}

// unclosedQuote finds, in the first of paths that has one, a quote that is
// opened and never closed (by the end of the file, or within
// maxRecordBytes): an error naming the line where it opened, or nil.
func (r *reader) unclosedQuote(paths []string) *engine.InputError {
	delim, _ := r.dialect.str("delim")
	quote, _ := r.dialect.str("quote")
	escape, _ := r.dialect.str("escape")
	for _, path := range paths {
		var pending strings.Builder
		var start, lines int64
		open := false
		err := scanLines(path, r.opts, func(line int64, raw string) bool {
			if pending.Len() == 0 {
				start = line
			} else {
				pending.WriteByte('\n')
			}
			pending.WriteString(raw)
			if _, complete := splitRecord(pending.String(), delim, quote, escape); complete {
				pending.Reset()
				return true
			}
			lines = line - start
			open = pending.Len() >= maxRecordBytes
			return !open
		})
		if err == nil && (open || pending.Len() > 0) {
			return &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(path), Line: start,
				Msg: fmt.Sprintf("a quote opened on this line is not closed: the %d lines after it would be "+
					"one record; fix the quote (or set quote: '' if the file does not quote)", lines)}
		}
	}
	return nil
}
