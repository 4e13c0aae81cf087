package duckdb

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// Values that do not fit. DuckDB converts text into a column's type with
// loss where a value does not fit it: CSV 1.5 and JSON 6.6 in a BIGINT
// column become 2 and 7, 1.234 in DECIMAL(10,2) becomes 1.23, a timestamp
// with a UTC offset in a TIMESTAMP column loses the offset (its wall clock
// is kept, so the instant moves), nanoseconds are cut to microseconds, and a
// DATE column drops a time of day. Its readers reject only values that do
// not convert at all (text, out of range). So columns of those types are
// read as text (CSV: VARCHAR; JSON: the JSON value) and converted in the
// view's projection, after a check that the conversion loses nothing; a
// value that fails it is a bad record like any other (on_bad_record). What
// the check accepts:
//
//   - integers: a whole number (1, 1.0, 1e3) in range; never 1.5 or 15e-1.
//   - DECIMAL(p,s): at most s decimal places that are not trailing zeros;
//     exponent forms only when they convert exactly; in range.
//   - TIMESTAMP (and _S, _MS, _NS): no UTC offset other than zero (Z, +00,
//     +00:00, UTC) and no more fractional second digits that are not zeros
//     than the type keeps.
//   - TIMESTAMP WITH TIME ZONE: any offset, and no more than six
//     fractional second digits that are not zeros.
//   - DATE: no time of day other than midnight.
//   - BOOLEAN, in JSON only: true, false, a word the cast knows ("yes",
//     "t") or the numbers 0 and 1; never 2 or 0.5, which DuckDB's JSON
//     reader turns into true. (CSV's reader already refuses those.)
//
//   - DOUBLE and FLOAT: a finite number past the type's range (1e400),
//     which the readers turn into infinity; their rounding of long
//     decimals is what the type means, and an infinity spelled out stays
//     one.
//
// Columns whose type comes with a format (dateformat, timestampformat) are
// left to the reader, whose format parsing is strict. TIME, CSV BOOLEAN,
// VARCHAR and nested types are not checked.

// checkKind is how a column's values are checked.
type checkKind int

const (
	ckNone checkKind = iota
	ckInt
	ckDecimal
	ckTimestamp
	ckTimestampTZ
	ckDate
	ckBool
	ckFloat
)

// valueCheck is the check of one column.
type valueCheck struct {
	kind  checkKind
	typ   string // the column's type, as recorded
	scale int    // DECIMAL scale; fractional second digits a TIMESTAMP keeps
	// thousands and decimal are the CSV options of that name ("" unset).
	thousands, decimal string
	// canon is the SQL function of the fast path (canon.go), "" for none.
	canon string
}

var (
	intTypes = map[string]bool{"TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true, "HUGEINT": true,
		"UTINYINT": true, "USMALLINT": true, "UINTEGER": true, "UBIGINT": true, "UHUGEINT": true}
	tsScale   = map[string]int{"TIMESTAMP": 6, "TIMESTAMP_S": 0, "TIMESTAMP_MS": 3, "TIMESTAMP_NS": 9}
	tzTypes   = map[string]bool{"TIMESTAMP WITH TIME ZONE": true, "TIMESTAMPTZ": true}
	reDecimal = regexp.MustCompile(`^DECIMAL\((\d+),\s*(\d+)\)$`)
	// reDecimalText is a number written in decimal (what the integer check
	// accepts before range and fraction).
	// reDateText is how a date (and a timestamp) written as the check
	// expects it starts.
	reDateText    = regexp.MustCompile(`^-?[0-9]{1,6}-[0-9]{1,2}-[0-9]{1,2}`)
	reDecimalText = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
)

// checkFor returns the check of a column of type typ in a source of the
// given format read with opts (and, for CSV, the settled dialect d), or nil.
func checkFor(typ, format string, opts, d options) *valueCheck {
	t := strings.ToUpper(strings.TrimSpace(typ))
	c := &valueCheck{typ: t}
	if format == "csv" {
		c.thousands, _ = opts.str("thousands")
		c.decimal, _ = opts.str("decimal_separator")
		if c.decimal == "." {
			c.decimal = ""
		}
	}
	has := func(name string) bool { return opts.has(name) || d.has(name) }
	switch {
	case intTypes[t]:
		c.kind = ckInt
	case reDecimal.MatchString(t):
		c.kind = ckDecimal
		c.scale, _ = strconv.Atoi(reDecimal.FindStringSubmatch(t)[2])
	case t == "DOUBLE" || t == "FLOAT":
		c.kind = ckFloat
	case t == "BOOLEAN":
		if format != "json" {
			return nil
		}
		c.kind = ckBool
	case t == "DATE" && !has("dateformat"):
		c.kind = ckDate
	case tzTypes[t]:
		if has("timestampformat") {
			return nil
		}
		c.kind, c.scale = ckTimestampTZ, 6
	default:
		s, ok := tsScale[t]
		if !ok || has("timestampformat") {
			return nil
		}
		c.kind, c.scale = ckTimestamp, s
	}
	return c
}

// checks returns the check of each of cols (nil entries for unchecked
// columns), or nil when no column is checked.
func checks(cols []bookmark.Column, format string, opts, d options) map[string]*valueCheck {
	var out map[string]*valueCheck
	for _, c := range cols {
		if vc := checkFor(c.Type, format, opts, d); vc != nil {
			if out == nil {
				out = map[string]*valueCheck{}
			}
			out[c.Name] = vc
		}
	}
	return out
}

// number is the SQL expression v (text) with the CSV number options undone.
func (c *valueCheck) number(v string) string {
	if c.thousands != "" {
		v = fmt.Sprintf("replace(%s, %s, '')", v, literal(c.thousands))
	}
	if c.decimal != "" {
		v = fmt.Sprintf("replace(%s, %s, '.')", v, literal(c.decimal))
	}
	return v
}

// lossySQL is a SQL condition, on a non-NULL text expression v, that the
// value would lose something if converted (it may also not convert at all:
// see okSQL).
func (c *valueCheck) lossySQL(v string) string {
	switch c.kind {
	case ckInt:
		// Text without '.', 'e' or 'E' is whole: it converts exactly or
		// not at all (TRY_CAST is NULL: the error path), so only the rest
		// is tested, most values never (AND evaluates its right side only
		// where its left is true). Of the rest, text of at most 15 bytes
		// has at most 15 significant digits, which a DOUBLE holds exactly:
		// it is whole exactly when its DOUBLE equals the integer it
		// converts to. Longer text must also be digits with at most a
		// fraction of zeros.
		// DuckDB also converts hex, binary and '_'-grouped digits
		// (0x1F, 0b101, 1_000) exactly; they are accepted: testing every
		// value for them cost a fifth of the CSV conversion's speed.
		// "0x1E" does not convert (its E is taken for an exponent) and is
		// a bad record.
		return fmt.Sprintf(`((contains(%[1]s, '.') OR contains(%[1]s, 'e') OR contains(%[1]s, 'E')) AND `+
			`(TRY_CAST(%[1]s AS DOUBLE) IS DISTINCT FROM TRY_CAST(%[1]s AS %[2]s) OR (length(%[1]s) > 15 AND `+
			`NOT regexp_full_match(%[1]s, '\s*[+-]?[0-9]+\.0*\s*'))))`, c.number(v), c.typ)
	case ckDecimal:
		return fmt.Sprintf(`CASE WHEN contains(%[1]s, 'e') OR contains(%[1]s, 'E') `+
			`THEN TRY_CAST(%[1]s AS DOUBLE) IS DISTINCT FROM TRY_CAST(%[1]s AS %[2]s)::DOUBLE `+
			`ELSE contains(%[1]s, '.') AND length(rtrim(split_part(trim(%[1]s), '.', 2), '0')) > %[3]d END`, c.number(v), c.typ, c.scale)
	case ckTimestamp:
		// Anything longer than "2024-01-01 10:00:00" may carry a fraction
		// or an offset; a time of day followed by a non-zero offset (of
		// hours, minutes and maybe seconds, as PostgreSQL writes
		// +00:53:28), or a non-zero digit past what the type keeps, does
		// not fit.
		frac := fmt.Sprintf(`:\d\d[.,]\d{%d}\d*[1-9]`, c.scale)
		return fmt.Sprintf(`(length(%[1]s) > 19 AND (regexp_matches(%[1]s, '%[2]s') OR `+
			`(regexp_matches(%[1]s, '\d:\d\d(:\d\d([.,]\d*)?)?\s*[+-]\d\d(:?\d\d(:?\d\d)?)?\s*$') AND NOT regexp_matches(%[1]s, '[+-]00(:?00(:?00)?)?\s*$'))))`, v, frac)
	case ckFloat:
		// Past the range takes an exponent or more than 38 digits (a
		// FLOAT's range); an infinity spelled out has neither.
		return fmt.Sprintf(`((contains(%[1]s, 'e') OR contains(%[1]s, 'E') OR length(%[1]s) > 38) AND isinf(TRY_CAST(%[1]s AS %[2]s)))`,
			c.number(v), c.typ)
	case ckTimestampTZ:
		return fmt.Sprintf(`(length(%s) > 26 AND regexp_matches(%s, ':\d\d[.,]\d{%d}\d*[1-9]'))`, v, v, c.scale)
	case ckDate:
		return fmt.Sprintf(`(length(trim(%[1]s)) > 10 AND TRY_CAST(%[1]s AS TIMESTAMP) IS DISTINCT FROM TRY_CAST(%[1]s AS DATE)::TIMESTAMP)`, v)
	}
	return "false"
}

// okSQL is a SQL condition, on a non-NULL text expression v, that the value
// converts to the column's type without loss.
func (c *valueCheck) okSQL(v string) string {
	ok := fmt.Sprintf("NOT %s AND %s IS NOT NULL", c.lossySQL(v), c.tryCastSQL(v))
	if c.canon != "" {
		ok = fmt.Sprintf("coalesce(%s(%s), false) OR (%s)", c.canon, v, ok)
	}
	return ok
}

// tryCastSQL converts the text expression v, NULL when it does not convert.
func (c *valueCheck) tryCastSQL(v string) string {
	if c.kind == ckInt || c.kind == ckDecimal || c.kind == ckFloat {
		v = c.number(v)
	}
	return fmt.Sprintf("TRY_CAST(%s AS %s)", v, c.typ)
}

// castSQL converts the text expression v (checked) to the column's type.
func (c *valueCheck) castSQL(v string) string {
	if c.kind == ckInt || c.kind == ckDecimal || c.kind == ckFloat {
		v = c.number(v)
	}
	return fmt.Sprintf("CAST(%s AS %s)", v, c.typ)
}

// plain is v with the CSV number options undone, in Go.
func (c *valueCheck) plain(v string) string {
	if c.thousands != "" {
		v = strings.ReplaceAll(v, c.thousands, "")
	}
	if c.decimal != "" {
		v = strings.ReplaceAll(v, c.decimal, ".")
	}
	return v
}

// why says, for a message, why value does not fit.
func (c *valueCheck) why(value string) string {
	v := strings.TrimSpace(value)
	switch c.kind {
	case ckInt:
		if !reDecimalText.MatchString(c.plain(v)) {
			return "it is not a decimal number"
		}
		if strings.ContainsAny(c.plain(v), ".eE") {
			return "it has a fraction or an exponent, and would be rounded to an integer"
		}
		return "it is out of the type's range"
	case ckDecimal:
		if !reDecimalText.MatchString(c.plain(v)) {
			return "it is not a decimal number"
		}
		return fmt.Sprintf("it does not fit (more than %d decimal places would be rounded, or out of range)", c.scale)
	case ckTimestamp:
		if !reDateText.MatchString(v) {
			return "it is not a timestamp (YYYY-MM-DD hh:mm:ss; a timestampformat option reads other forms)"
		}
		return fmt.Sprintf("it does not fit (a UTC offset would be dropped, or fractional seconds past %d digits cut)", c.scale)
	case ckTimestampTZ:
		if !reDateText.MatchString(v) {
			return "it is not a timestamp (YYYY-MM-DD hh:mm:ss+hh; a timestampformat option reads other forms)"
		}
		return fmt.Sprintf("it does not fit (fractional seconds past %d digits would be cut)", c.scale)
	case ckDate:
		if !reDateText.MatchString(v) {
			return "it is not a date (YYYY-MM-DD; a dateformat option reads other forms)"
		}
		return "it has a time of day, which the date would drop"
	case ckBool:
		return "it is not true, false, 0 or 1"
	case ckFloat:
		if _, err := strconv.ParseFloat(c.plain(v), 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return "it is not a number"
		}
		return "it is out of the type's range, and would be read as infinity"
	}
	return "it does not convert"
}

// Names of what the checks add to a read.
const (
	// fileColumn is the read path of each row (read_csv's filename option).
	fileColumn = internalPrefix + "_file"
	// badColumn names, in a kept read, the first column whose value does
	// not fit (NULL when all do).
	badColumn = internalPrefix + "_bad"
	// badMarker starts the message of the error a failed check raises:
	// marker, read path, column and value, separated by 0x1f.
	badMarker = internalPrefix + "_value_does_not_fit"
)

// settleChecks decides which of the source's columns are checked.
func (r *reader) settleChecks() {
	r.checked = nil
	if (r.src.Format == "csv" || r.src.Format == "json") && !r.src.Exact && !r.rescuing() {
		r.checked = checks(r.data, r.src.Format, r.opts, r.dialect)
	}
	if r.canon && !r.jsonTyped() {
		for _, c := range r.checked {
			c.canon = c.canonFunc()
		}
	}
}

// textSQL is the text of a checked column's value as read: CSV's VARCHAR
// itself; for JSON a string's contents or a number's or boolean's text (NULL for other
// JSON values, which never fit a checked type).
func (r *reader) textSQL(name string) string {
	if r.src.Format != "json" || !r.jsonTyped() {
		return ident(name)
	}
	return jsonTextSQL(ident(name))
}

// jsonTyped reports whether a JSON source's columns read as text are read
// as DuckDB's JSON type (rescue and the all-text pass keep the value as
// JSON); else they are read as VARCHAR, which the reader fills with a
// string's contents and a number's or boolean's text, as jsonTextSQL
// would, and objects and arrays as JSON text, which no checked type
// converts from. Reading VARCHAR spares every checked value its JSON
// function calls: a JSON → Parquet run over 268 MB (two BIGINT columns and
// a TIMESTAMP checked) took 0.88 s read as JSON, 0.68 s as VARCHAR; the
// values and the messages for values that do not fit are the same.
func (r *reader) jsonTyped() bool { return r.allText || r.rescuing() }

// jsonTextSQL is the text of the JSON value v: a string's contents, a
// number's text, else NULL.
func jsonTextSQL(v string) string {
	return fmt.Sprintf("CASE json_type(%[1]s) WHEN 'VARCHAR' THEN %[1]s->>'$' WHEN 'BIGINT' THEN %[1]s::VARCHAR "+
		"WHEN 'UBIGINT' THEN %[1]s::VARCHAR WHEN 'DOUBLE' THEN %[1]s::VARCHAR WHEN 'BOOLEAN' THEN %[1]s::VARCHAR END", v)
}

// fitsSQL is the condition that column name's value fits its type.
func (r *reader) fitsSQL(name string, c *valueCheck) string {
	t := r.textSQL(name)
	if r.src.Format != "json" {
		return fmt.Sprintf("(%s IS NULL OR (%s))", t, c.okSQL(t))
	}
	return fmt.Sprintf("(%s IS NULL OR (%s IS NOT NULL AND %s))", ident(name), t, c.okSQL(t))
}

// selectList is the projection of one read in schema order. Checked
// columns are converted, a value that does not fit raising an error
// (badMarker) that asInputError turns into an InputError; with keep, they
// are left as read, followed by badColumn and fileColumn.
func (r *reader) selectList(keep bool) string {
	cols := r.schema()
	if r.checked == nil {
		return projection(cols)
	}
	parts := make([]string, 0, len(cols)+2)
	var bad []string
	for _, col := range cols {
		expr, b := r.columnExpr(col, keep)
		parts = append(parts, expr)
		if b != "" {
			bad = append(bad, b)
		}
	}
	if keep {
		parts = append(parts, "CASE "+strings.Join(bad, " ")+" END AS "+ident(badColumn), ident(fileColumn))
	}
	return strings.Join(parts, ", ")
}

// columnExpr is one column of selectList, and with keep its WHEN branch of
// badColumn ("" when the column is not checked).
func (r *reader) columnExpr(col bookmark.Column, keep bool) (expr, bad string) {
	c := r.checked[col.Name]
	switch {
	case c == nil:
		return ident(col.Name), ""
	case keep:
		return ident(col.Name), fmt.Sprintf("WHEN NOT %s THEN %s", r.fitsSQL(col.Name, c), literal(col.Name))
	}
	t := r.textSQL(col.Name)
	raise := fmt.Sprintf("error(%s || chr(31) || %s || chr(31) || %s || chr(31) || left(coalesce(%s, %s::VARCHAR), %d))",
		literal(badMarker), ident(fileColumn), literal(col.Name), t, ident(col.Name), maxValueText)
	// One conversion per value; the check of a value that did
	// not convert runs only then (coalesce is lazy).
	conv := fmt.Sprintf("CASE WHEN %s THEN NULL ELSE %s END", c.lossySQL(t), c.tryCastSQL(t))
	expr = fmt.Sprintf("coalesce(%s, CASE WHEN %s IS NULL THEN NULL ELSE %s END)", conv, ident(col.Name), raise)
	if c.canon != "" {
		// Canonical text converts as is; the rest (NULL included) is
		// checked as above.
		expr = fmt.Sprintf("CASE WHEN %s(%s) THEN %s ELSE %s END", c.canon, t, c.castSQL(t), expr)
	}
	return expr + " AS " + ident(col.Name), ""
}

// keptView selects from a table filled by a kept read the rows whose values
// all fit, converted.
func (r *reader) keptView(table string) string {
	cols := r.schema()
	parts := make([]string, len(cols))
	for i, col := range cols {
		parts[i] = ident(col.Name)
		if c := r.checked[col.Name]; c != nil {
			parts[i] = c.castSQL(r.textSQL(col.Name)) + " AS " + ident(col.Name)
		}
	}
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NULL", strings.Join(parts, ", "), table, ident(badColumn))
}

// badValueError turns the error a failed check raised into an InputError
// naming file, line (found by reading the file again, on this error path
// only) and column.
func badValueError(raw string, readers []*reader) (*engine.InputError, bool) {
	i := strings.Index(raw, badMarker+"\x1f")
	if i < 0 {
		return nil, false
	}
	parts := strings.SplitN(raw[i+len(badMarker)+1:], "\x1f", 3)
	if len(parts) < 3 {
		return nil, false
	}
	path, col, value := parts[0], parts[1], parts[2]
	for _, r := range readers {
		c := r.checked[col]
		if _, ok := r.in.byKey[path]; !ok || c == nil {
			continue
		}
		ie := &engine.InputError{Source: r.src.Ctx, File: r.in.keyOf(path), Column: col,
			Msg: fmt.Sprintf("value %q does not convert to the column's type %s without loss: %s", clip(value), c.typ, c.why(value))}
		if !r.src.Stream {
			if found, err := r.findValues(path, []badValue{{col: col, value: value}}, nil); err == nil && len(found) > 0 {
				ie.Line = found[0].line
			}
		}
		return ie, true
	}
	return nil, false
}
