package duckdb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark/engine"
)

var (
	// CSV: "CSV Error on Line: 4"; JSON: "... at byte 17 in line 3: ..." and
	// "JSON transform error in file "x", in line 2: ...".
	reLine = regexp.MustCompile(`(?i)(?:CSV Error on Line:\s*|\bin line\s+|\bat line\s+)(\d+)`)
	// "Error when converting column "id"."; JSON: "... key "id" ...".
	reColumn = regexp.MustCompile(`(?:converting column|column|key) "((?:[^"]|"")+)"`)
	// DuckDB's error class prefix, e.g. "Invalid Input Error: ".
	rePrefix = regexp.MustCompile(`^[A-Za-z ]*Error: `)
)

// message returns the useful part of a DuckDB error: the class prefix,
// the echoed SQL, the "Possible fixes" advice and the reader settings dump
// dropped, the offending raw line last.
func message(err error) string {
	msg := err.Error()
	var de *duckdb.Error
	if errors.As(err, &de) {
		msg = de.Msg
	}
	var keep, original []string
	for i, line := range strings.Split(msg, "\n") {
		t := strings.TrimSpace(line)
		if i == 0 {
			t = rePrefix.ReplaceAllString(t, "")
		}
		switch {
		case t == "" && len(keep)+len(original) > 0:
			return clipN(strings.Join(append(keep, original...), "; "), 4*maxEcho)
		case t == "", strings.HasPrefix(t, "CSV Error on Line"):
			// The line number travels in InputError.Line.
		case strings.HasPrefix(t, "Possible fixes"), strings.HasPrefix(t, "Possible solutions"),
			strings.HasPrefix(t, "LINE "), strings.HasPrefix(t, "Try setting"):
			return clipN(strings.Join(append(keep, original...), "; "), 4*maxEcho)
		case strings.HasPrefix(t, "Original Line:"):
			original = append(original, clip(t))
		default:
			keep = append(keep, clip(t))
		}
	}
	if out := strings.Join(append(keep, original...), "; "); out != "" {
		return clipN(out, 4*maxEcho)
	}
	return clipN(strings.TrimSpace(msg), 4*maxEcho)
}

// dbError is a DuckDB error reduced to its message; it still unwraps to
// the driver's error.
type dbError struct {
	msg string
	err error
}

func (e *dbError) Error() string { return e.msg }
func (e *dbError) Unwrap() error { return e.err }

// locate finds which source file a DuckDB error is about: the longest read
// path of any source that the message contains.
func locate(msg string, readers []*reader) (*reader, string) {
	var best *reader
	var bestPath string
	for _, r := range readers {
		for _, p := range r.in.paths {
			if len(p) > len(bestPath) && strings.Contains(msg, p) {
				best, bestPath = r, p
			}
		}
	}
	return best, bestPath
}

// asInputError turns a DuckDB error that names a source file into an
// *engine.InputError with file, line and column; ok is false otherwise.
func asInputError(err error, readers []*reader) (*engine.InputError, bool) {
	raw := err.Error()
	if ie, ok := badValueError(raw, readers); ok {
		return ie, true
	}
	r, p := locate(raw, readers)
	if r == nil {
		return nil, false
	}
	ie := &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(p)}
	if m := reLine.FindStringSubmatch(raw); m != nil {
		ie.Line, _ = strconv.ParseInt(m[1], 10, 64)
	}
	msg := message(err)
	if r.src.Format == "json" && ie.Line > 0 && (strings.Contains(raw, "Malformed JSON") || strings.Contains(raw, "JSON transform error")) {
		// DuckDB 1.5 counts records, not lines (blank lines are not
		// counted), and the record of a malformed line one too high (a
		// bad first line is reported as line 2).
		said, n := ie.Line, ie.Line
		if strings.Contains(raw, "Malformed JSON") && n > 1 {
			n--
		}
		if !r.src.Stream {
			if line, err := recordLine(p, r.opts, n); err == nil && line > 0 {
				n = line
			}
		}
		ie.Line = n
		msg = strings.Replace(msg, fmt.Sprintf("in line %d", said), fmt.Sprintf("in line %d", n), 1)
	}
	if m := reColumn.FindStringSubmatch(raw); m != nil {
		ie.Column = strings.ReplaceAll(m[1], `""`, `"`)
	}
	if strings.Contains(raw, "unterminated quote") {
		// DuckDB echoes every line up to the end of the file, and says
		// what is wrong after them.
		first, _, _ := strings.Cut(raw[strings.Index(raw, "\n")+1:], "\n")
		msg = "a quote opened on this line is not closed; " + clip(strings.TrimSpace(first))
	}
	if strings.Contains(raw, "expected records, but got non-record JSON") {
		// A JSON array file, or lines of bare values: DuckDB says only
		// what it expected.
		msg = "a line holds JSON that is not an object: format json reads JSON Lines, one object per line " +
			"(a file holding one JSON array of objects is not JSON Lines)"
	}
	ie.Msg = strings.ReplaceAll(msg, p, ie.File)
	return ie, true
}

// wrap maps an error met while doing something that may read any source:
// cancellation wins, then an error naming a file becomes an InputError,
// else the cleaned message says what was being done.
func wrap(ctx context.Context, err error, readers []*reader, format string, args ...any) error {
	doing := fmt.Sprintf(format, args...)
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", doing, ctx.Err())
	}
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return err
	}
	if ie, ok := asInputError(err, readers); ok {
		return ie
	}
	return fmt.Errorf("%s: %w", doing, &dbError{message(err), err})
}

// maxEcho bounds how much of the input (a line, a value, a name) an error
// message repeats.
const maxEcho = 200

// clip shortens s to at most maxEcho bytes (on a rune boundary), saying how
// much was left out.
func clip(s string) string { return clipN(s, maxEcho) }

// clipN shortens s to at most n bytes likewise.
func clipN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:cut], len(s)-cut)
}
