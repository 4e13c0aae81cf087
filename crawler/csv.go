package crawler

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Delimiters are the CSV delimiters a crawl tries, in the order that
// breaks a tie.
var Delimiters = []rune{',', '|', '\t', ';'}

// sniffCSV classifies text as CSV: the delimiter of Delimiters under which
// every record has the same number of fields, two or more (the most
// fields wins, then the order of Delimiters), over at least two records;
// then Glue's header rule: the first record is a header when each of its
// fields is non-empty text (no number, boolean, date or timestamp) and
// some column of the other records is not text. Without a header the
// columns are col0, col1, …. complete says text is the whole file; if not
// its last, cut line is dropped.
func sniffCSV(text []byte, complete bool) (shape, error) {
	if !complete {
		i := bytes.LastIndexByte(text, '\n')
		if i < 0 {
			return shape{}, errors.New("no complete line within sample_bytes")
		}
		text = text[:i+1]
	}
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
	var best [][]string
	var bestDelim rune
	for _, d := range Delimiters {
		recs, ok := csvRecords(text, d)
		if ok && len(recs[0]) > len(best0(best)) {
			best, bestDelim = recs, d
		}
	}
	if best == nil {
		return shape{}, errors.New("no delimiter (, | tab ;) gives two or more columns on every line, over two lines or more")
	}
	header := csvHeader(best)
	width := len(best[0])
	s := make(schema, width)
	data := best
	if header {
		for i, n := range uniqueNames(best[0]) {
			s[i].Name = n
		}
		data = best[1:]
	} else {
		for i := range s {
			s[i].Name = "col" + strconv.Itoa(i)
		}
	}
	rest := make(schema, width)
	for j, rec := range data {
		for i, v := range rec {
			if t, ok := textType(v, true); ok {
				s.observe(i, t)
				if j > 0 || header {
					rest.observe(i, t)
				}
			}
		}
	}
	out := shape{Format: "csv", Options: map[string]string{"delim": string(bestDelim), "header": strconv.FormatBool(header)},
		Schema: s}
	if !header {
		out.first, out.rest = best[0], rest
	}
	return out, nil
}

func best0(recs [][]string) []string {
	if len(recs) == 0 {
		return nil
	}
	return recs[0]
}

// csvRecords parses text with delimiter d: ok when there are two records
// or more, all of the same width, two fields or more.
func csvRecords(text []byte, d rune) ([][]string, bool) {
	r := csv.NewReader(bytes.NewReader(text))
	r.Comma = d
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	var recs [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false
		}
		if len(rec) < 2 || len(recs) > 0 && len(rec) != len(recs[0]) {
			return nil, false
		}
		recs = append(recs, rec)
	}
	return recs, len(recs) >= 2
}

// csvHeader is Glue's header rule over parsed records.
func csvHeader(recs [][]string) bool {
	for _, v := range recs[0] {
		if t, ok := textType(strings.TrimSpace(v), true); !ok || t.Kind != bookmark.Varchar {
			return false
		}
	}
	for i := range recs[0] {
		for _, rec := range recs[1:] {
			if t, ok := textType(rec[i], true); ok && t.Kind != bookmark.Varchar {
				return true
			}
		}
	}
	return false
}

// uniqueNames makes header names unique: a repeated name gets _1, _2, …;
// surrounding spaces are trimmed.
func uniqueNames(names []string) []string {
	out := make([]string, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		n = strings.TrimSpace(n)
		name := n
		for k := 1; seen[strings.ToLower(name)]; k++ {
			name = fmt.Sprintf("%s_%d", n, k)
		}
		seen[strings.ToLower(name)] = true
		out[i] = name
	}
	return out
}
