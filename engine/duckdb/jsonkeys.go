package duckdb

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"sync"
	"unicode/utf8"
)

// The key check of checkJSONKeys in Go. DuckDB's check parses every
// object and builds its key list (310 ms over 268 MB, more than the typed
// read of the same files); here each line's top-level keys are found by
// one scan of its bytes, on every core, and looked up in the schema. A
// line the scan does not follow to its end as one object (not JSON, not
// an object, a byte-order mark, an object past maxKeyLine) makes its
// file's check DuckDB's own, so that what counts as an object, and what
// is passed over as an error the read reports, stay DuckDB's.

// maxKeyLine bounds the lines scanned here: a longer line is DuckDB's to
// check (its default maximum_object_size is 16 MiB).
const maxKeyLine = 256 << 10

// keyScan is the outcome of scanning one file.
type keyScan struct {
	key   string // the first key not in the schema ("" when none)
	doubt bool   // a line the scan could not follow: DuckDB decides
	err   error
}

// scanJSONKeys scans the files at paths for a top-level key outside names,
// on every core. It returns the index of the first file (in paths' order)
// with one, and the key, or -1; and the files the scan left to DuckDB.
func scanJSONKeys(ctx context.Context, paths []string, opts options, names map[string]bool) (int, string, []string, error) {
	res := make([]keyScan, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res[i] = scanKeysFile(paths[i], opts, names)
			}
		}()
	}
feed:
	for i := range paths {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return -1, "", nil, err
	}
	var doubt []string
	for i, r := range res {
		switch {
		case r.err != nil:
			return -1, "", nil, r.err
		case r.doubt:
			doubt = append(doubt, paths[i])
		case r.key != "":
			return i, r.key, nil, nil
		}
	}
	return -1, "", doubt, nil
}

// scanKeysFile scans one file (see scanJSONKeys).
func scanKeysFile(path string, opts options, names map[string]bool) keyScan {
	f, err := os.Open(path)
	if err != nil {
		return keyScan{doubt: true}
	}
	defer f.Close()
	rd, closer, err := decompress(f, path, opts)
	if err != nil {
		return keyScan{doubt: true}
	}
	defer closer()
	br := bufio.NewReaderSize(rd, maxKeyLine)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return keyScan{doubt: true}
		}
		if err != nil && err != io.EOF {
			return keyScan{doubt: true}
		}
		if len(line) > 0 {
			key, ok := lineKeys(line, names)
			if !ok {
				return keyScan{doubt: true}
			}
			if key != "" {
				return keyScan{key: key}
			}
		}
		if err == io.EOF {
			return keyScan{}
		}
	}
}

// lineKeys returns the first top-level key of the object on line that is
// not in names ("" when all are), and false when line is not blank and
// not one object followed by nothing but spaces, or not UTF-8.
func lineKeys(line []byte, names map[string]bool) (string, bool) {
	i := skipSpace(line, 0)
	if i == len(line) {
		return "", true // a blank line
	}
	if line[i] != '{' || !utf8.Valid(line) {
		return "", false
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		return "", skipSpace(line, i+1) == len(line)
	}
	var bad string
	for {
		if i >= len(line) || line[i] != '"' {
			return "", false
		}
		end, escaped := stringEnd(line, i)
		if end < 0 {
			return "", false
		}
		raw := line[i+1 : end]
		if escaped {
			var k string
			if json.Unmarshal(line[i:end+1], &k) != nil {
				return "", false
			}
			if bad == "" && !names[k] {
				bad = k
			}
		} else if bad == "" && !names[string(raw)] {
			bad = string(raw)
		}
		i = skipSpace(line, end+1)
		if i >= len(line) || line[i] != ':' {
			return "", false
		}
		if i = skipValue(line, skipSpace(line, i+1)); i < 0 {
			return "", false
		}
		i = skipSpace(line, i)
		if i >= len(line) {
			return "", false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			if skipSpace(line, i+1) != len(line) {
				return "", false
			}
			return bad, true
		default:
			return "", false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the quote that closes the string opening
// at b[i], and whether it holds a backslash; -1 when it is not closed or
// holds a control character.
func stringEnd(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j, escaped
		case c == '\\':
			escaped = true
			j++ // the escaped byte; \u's digits are plain bytes
		case c < 0x20:
			return -1, false
		}
	}
	return -1, false
}

// skipValue returns the index just past the JSON value starting at b[i],
// or -1 when there is none. Scalars are checked by encoding/json when they
// are not plain (a string, a number's characters, true, false, null).
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		end, escaped := stringEnd(b, i)
		if end < 0 || (escaped && !json.Valid(b[i:end+1])) {
			return -1
		}
		return end + 1
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := stringEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					if !json.Valid(b[i : j+1]) {
						return -1
					}
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
			j++
		}
		if s := string(b[i:j]); s != "true" && s != "false" && s != "null" && !jsonNumber(b[i:j]) {
			return -1
		}
		return j
	}
}

// jsonNumber reports whether b is a JSON number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func jsonNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}
