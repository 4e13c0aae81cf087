package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/duckdb/duckdb-go/v2"
)

// The fast path of the value checks (strict.go). Most checked values are
// written the one way a column's type prints them: 42, -7,
// 2024-01-02, 2024-01-02 10:00:00.5. Such text converts exactly, so it
// needs no check; only the cast. A Go function over DuckDB's chunks (2,048
// values a call) tells canonical text apart, and the view casts it
// directly; every other value (leading zeros or a plus sign, spaces, a
// fraction or an exponent, a T, an offset, a value near the type's range,
// NULL) takes the exact check of strict.go, unchanged, with its result and
// its message. The SQL check tests every integer three times for '.', 'e'
// and 'E' (a fifth of a CSV conversion's CPU); the Go test reads each byte
// once.

// canonKind is a type whose canonical text the fast path knows.
type canonKind struct {
	fn    string // the SQL function's name
	check func(string) bool
}

// canonKinds are the fast paths by column type (as recorded, upper case).
var canonKinds = map[string]canonKind{
	"TINYINT":                  {internalPrefix + "_canon_int8", func(s string) bool { return canonInt(s, 1<<7) }},
	"SMALLINT":                 {internalPrefix + "_canon_int16", func(s string) bool { return canonInt(s, 1<<15) }},
	"INTEGER":                  {internalPrefix + "_canon_int32", func(s string) bool { return canonInt(s, 1<<31) }},
	"BIGINT":                   {internalPrefix + "_canon_int64", func(s string) bool { return canonInt(s, 0) }},
	"DATE":                     {internalPrefix + "_canon_date", canonDate},
	"TIMESTAMP":                {internalPrefix + "_canon_timestamp", canonTimestamp},
	"TIMESTAMP WITH TIME ZONE": {internalPrefix + "_canon_timestamp", canonTimestamp},
	"TIMESTAMPTZ":              {internalPrefix + "_canon_timestamp", canonTimestamp},
}

// canonFunc is the name of the fast path's SQL function for a column with
// check c, or "" when it has none: its type has no fast path, or the CSV
// number options (thousands, decimal_separator) change how numbers read.
func (c *valueCheck) canonFunc() string {
	if c.thousands != "" || c.decimal != "" {
		return ""
	}
	switch c.kind {
	case ckInt, ckDate, ckTimestamp, ckTimestampTZ:
	default:
		return ""
	}
	return canonKinds[c.typ].fn
}

// canonInt reports whether s is an integer as DuckDB prints one: an
// optional minus, then 0 or a non-zero digit and at most 17 more (so that
// it fits a BIGINT), and, for a narrower type (limit 2^(bits-1)), within
// its range. "-0" is not canonical.
func canonInt(s string, limit int64) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 || (d[0] == '0' && (len(d) > 1 || len(s) > 1)) {
		return false
	}
	var v int64
	for i := 0; i < len(d); i++ {
		b := d[i] - '0'
		if b > 9 {
			return false
		}
		v = v*10 + int64(b)
	}
	if limit == 0 {
		return true
	}
	if s[0] == '-' {
		return v <= limit
	}
	return v < limit
}

// canonDate reports whether s is a valid date written YYYY-MM-DD, the year
// from 0001.
func canonDate(s string) bool {
	return len(s) == 10 && date(s)
}

// canonTimestamp reports whether s is a valid time of a valid date written
// YYYY-MM-DD hh:mm:ss, optionally with a fraction of 1 to 6 digits, and
// nothing else (no T, no offset).
func canonTimestamp(s string) bool {
	if len(s) < 19 || len(s) == 20 || len(s) > 26 || !date(s) || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return false
	}
	h, okh := digits2(s[11:13])
	m, okm := digits2(s[14:16])
	sec, oks := digits2(s[17:19])
	if !okh || !okm || !oks || h > 23 || m > 59 || sec > 59 {
		return false
	}
	if len(s) == 19 {
		return true
	}
	if s[19] != '.' {
		return false
	}
	for i := 20; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// date reports whether s starts with a valid date written YYYY-MM-DD.
func date(s string) bool {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	hi, ok1 := digits2(s[0:2])
	lo, ok2 := digits2(s[2:4])
	mo, ok3 := digits2(s[5:7])
	d, ok4 := digits2(s[8:10])
	y := hi*100 + lo
	if !ok1 || !ok2 || !ok3 || !ok4 || y == 0 || mo < 1 || mo > 12 || d < 1 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// digits2 is the value of two ASCII digits.
func digits2(s string) (int, bool) {
	a, b := s[0]-'0', s[1]-'0'
	if a > 9 || b > 9 {
		return 0, false
	}
	return int(a)*10 + int(b), true
}

// canonUDF is one fast path as a DuckDB scalar function: VARCHAR in,
// BOOLEAN out (NULL for NULL), one call per chunk.
type canonUDF struct {
	check func(string) bool
	in    duckdb.TypeInfo
	out   duckdb.TypeInfo
}

func (u *canonUDF) Config() duckdb.ScalarFuncConfig {
	return duckdb.ScalarFuncConfig{InputTypeInfos: []duckdb.TypeInfo{u.in}, ResultTypeInfo: u.out}
}

func (u *canonUDF) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{ChunkContextExecutor: func(_ context.Context, st *duckdb.ChunkIteratorState) error {
		vec, err := st.GetInputChunk().GetVector(0)
		if err != nil {
			return err
		}
		in, err := duckdb.GetVectorView[string](vec)
		if err != nil {
			return err
		}
		out, err := boolData(st.GetResultVector(), in.Len())
		if err != nil {
			return err
		}
		for row := range out {
			v, valid, err := in.GetValueBorrowed(row)
			if err != nil {
				return err
			}
			// A NULL's result is set NULL after the call.
			out[row] = valid && u.check(v)
		}
		return nil
	}}
}

// boolData is the data of a BOOLEAN result vector of n rows. duckdb-go
// v2.10506 writes a vector only through a row's value boxed as any, and
// that call crosses into C once a row (a third of the fast path's gain);
// its data is a plain array of one byte a row, reached here through the
// handle's fields, named. A duckdb-go whose fields are named otherwise
// makes registerCanon fail, and the checks take their SQL path.
func boolData(v duckdb.Vector, n int) ([]bool, error) {
	h := reflect.ValueOf(&v).Elem()
	if h.Kind() != reflect.Struct || h.NumField() == 0 || h.Field(0).Kind() != reflect.Pointer || h.Field(0).IsNil() {
		return nil, errors.New("result vector: not a duckdb-go v2 vector handle")
	}
	inner := h.Field(0)
	vec := reflect.NewAt(inner.Type().Elem(), inner.UnsafePointer()).Elem()
	f := vec.FieldByName("dataPtr")
	if !f.IsValid() || f.Kind() != reflect.UnsafePointer || f.UnsafePointer() == nil {
		return nil, errors.New("result vector: no data pointer")
	}
	return unsafe.Slice((*bool)(f.UnsafePointer()), n), nil
}

// registerCanon registers the fast paths' functions in the database of c.
func registerCanon(ctx context.Context, c *sql.Conn) error {
	in, err := duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	if err != nil {
		return err
	}
	out, err := duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, k := range canonKinds {
		if done[k.fn] {
			continue
		}
		done[k.fn] = true
		if err := duckdb.RegisterScalarUDF(c, k.fn, &canonUDF{check: k.check, in: in, out: out}); err != nil {
			return fmt.Errorf("registering %s: %w", k.fn, err)
		}
	}
	return nil
}

// registerCanon registers the fast paths' functions and tries them once;
// an error leaves the checks on their SQL path.
func (e *Engine) registerCanon() error {
	ctx := context.Background()
	c, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := registerCanon(ctx, c); err != nil {
		return err
	}
	fn := canonKinds["BIGINT"].fn
	var yes, no bool
	var null sql.NullBool
	if err := c.QueryRowContext(ctx, fmt.Sprintf("SELECT %[1]s('42'), %[1]s('4.2'), %[1]s(NULL)", fn)).Scan(&yes, &no, &null); err != nil {
		return fmt.Errorf("trying %s: %w", fn, err)
	}
	if !yes || no || null.Valid {
		return fmt.Errorf("trying %s: got %v, %v, %v, want true, false, NULL", fn, yes, no, null)
	}
	return nil
}
