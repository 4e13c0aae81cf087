package sqltable

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// formatter appends the DuckDB text form of a non-NULL value fetched
// through Go: []byte (MySQL text protocol) or a SQLite driver value.
type formatter func(dst []byte, v any) ([]byte, error)

// fmtText writes any value as plain text.
func fmtText(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case []byte:
		return append(dst, x...), nil
	case string:
		return append(dst, x...), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		return appendFloat(dst, x), nil
	case float32:
		return strconv.AppendFloat(dst, float64(x), 'g', -1, 32), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case time.Time:
		return x.AppendFormat(dst, "2006-01-02 15:04:05.999999"), nil
	}
	return fmt.Appendf(dst, "%v", v), nil
}

func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	// Plain digits where they stay short, so that DECIMAL columns parse
	// them too; exponents for the very large and very small.
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

const hexDigits = "0123456789ABCDEF"

// fmtBlob writes bytes as DuckDB's blob text, every byte as \xHH.
func fmtBlob(dst []byte, v any) ([]byte, error) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		return fmtText(dst, v)
	}
	for _, c := range b {
		dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
	}
	return dst, nil
}

// fmtBool writes 0/1 (MySQL TINYINT(1), SQLite) or text as true/false.
func fmtBool(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		return strconv.AppendBool(dst, x != 0), nil
	case []byte:
		if s := string(x); s == "0" || s == "1" {
			return strconv.AppendBool(dst, s == "1"), nil
		}
	}
	return fmtText(dst, v)
}

// fmtUTC appends "+00" to a timestamp the server gave in UTC (MySQL
// TIMESTAMP under time_zone +00:00).
func fmtUTC(dst []byte, v any) ([]byte, error) {
	dst, err := fmtText(dst, v)
	return append(dst, "+00"...), err
}

// fmtBits writes a MySQL BIT(n) value (big-endian bytes) as a number.
func fmtBits(dst []byte, v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok || len(b) > 8 {
		return dst, fmt.Errorf("BIT value of %d bytes does not fit 64 bits", len(b))
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return strconv.AppendUint(dst, n, 10), nil
}

// fmtTime writes a SQLite value the driver turned into time.Time in the
// text form of the column's type (kind Date, Time, Timestamp or
// TimestampTZ); other values pass as text.
func fmtTime(kind bookmark.Kind) formatter {
	return func(dst []byte, v any) ([]byte, error) {
		t, ok := v.(time.Time)
		if !ok {
			return fmtText(dst, v)
		}
		switch kind {
		case bookmark.Date:
			return t.AppendFormat(dst, "2006-01-02"), nil
		case bookmark.TimestampTZ:
			return t.UTC().AppendFormat(dst, "2006-01-02 15:04:05.999999+00"), nil
		case bookmark.Time:
			return t.AppendFormat(dst, "15:04:05.999999"), nil
		}
		return t.AppendFormat(dst, "2006-01-02 15:04:05.999999"), nil
	}
}

// valueError is a value of column col that could not be converted.
type valueError struct {
	col int
	err error
}

func (e *valueError) Error() string { return e.err.Error() }

// csvWriter writes rows as CSV the way the engine is told to read them
// (csvOptions): every non-NULL value quoted, quotes doubled, NULL an empty
// unquoted field.
type csvWriter struct {
	w    *bufio.Writer
	buf  []byte
	rows int64
}

func newCSVWriter(w io.Writer) *csvWriter {
	return &csvWriter{w: bufio.NewWriterSize(w, 1<<20)}
}

// write writes one row; format[i] (nil: text as is) renders value i.
func (c *csvWriter) write(vals []any, format []formatter) error {
	c.buf = c.buf[:0]
	for i, v := range vals {
		if i > 0 {
			c.buf = append(c.buf, ',')
		}
		if v == nil {
			continue
		}
		start := len(c.buf)
		var err error
		if f := format[i]; f != nil {
			c.buf, err = f(c.buf, v)
		} else {
			c.buf, err = fmtText(c.buf, v)
		}
		if err != nil {
			return &valueError{col: i, err: err}
		}
		c.buf = quoteCSV(c.buf, start)
	}
	c.buf = append(c.buf, '\n')
	c.rows++
	_, err := c.w.Write(c.buf)
	return err
}

// quoteCSV quotes the field that starts at start in b when it needs it:
// when it is empty (an empty unquoted field is NULL), holds a delimiter,
// quote or line break, or starts or ends with a blank. Numbers and times
// never do, which keeps the file small and the engine's parse fast.
func quoteCSV(b []byte, start int) []byte {
	if !needsQuote(b[start:]) {
		return b
	}
	quotes := 0
	for _, ch := range b[start:] {
		if ch == '"' {
			quotes++
		}
	}
	n := len(b) - start
	b = append(b, make([]byte, quotes+2)...)
	// shift right from the end, doubling quotes
	j := len(b) - 1
	b[j] = '"'
	j--
	for i := start + n - 1; i >= start; i-- {
		b[j] = b[i]
		j--
		if b[i] == '"' {
			b[j] = '"'
			j--
		}
	}
	b[j] = '"'
	return b
}

func needsQuote(f []byte) bool {
	if len(f) == 0 {
		return true
	}
	if c := f[0]; c == ' ' || c == '\t' {
		return true
	}
	if c := f[len(f)-1]; c == ' ' || c == '\t' {
		return true
	}
	for _, c := range f {
		switch c {
		case ',', '"', '\n', '\r':
			return true
		}
	}
	return false
}

func (c *csvWriter) flush() error { return c.w.Flush() }

// CSVOptions are the engine reader options for what Extract and ExtractTo
// write; see csvOptions.
func CSVOptions() map[string]any { return csvOptions() }

// csvOptions are the engine reader options for the files a source writes:
// no header, comma, RFC 4180 quotes, an empty unquoted field is NULL and a
// quoted empty field is the empty string.
func csvOptions() map[string]any {
	return map[string]any{
		"header":             false,
		"delim":              ",",
		"quote":              `"`,
		"escape":             `"`,
		"skip":               0,
		"nullstr":            "",
		"allow_quoted_nulls": false,
		"new_line":           `\n`,
	}
}
