package catalog

// How push_down_predicate's comparisons convert their two sides: as Spark
// SQL does with spark.sql.ansi.enabled false (Glue's engine), so that a
// predicate keeps the partitions Spark would. A test compares a table of
// predicates with what a Spark Connect server answers.

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// tri is a truth value of SQL's three-valued logic.
type tri int8

const (
	no tri = iota
	yes
	unknown // NULL: a comparison that could not be made
)

func truth(b bool) tri {
	if b {
		return yes
	}
	return no
}

func (a tri) not() tri {
	switch a {
	case yes:
		return no
	case no:
		return yes
	}
	return unknown
}

func (a tri) and(b tri) tri {
	switch {
	case a == no || b == no:
		return no
	case a == unknown || b == unknown:
		return unknown
	}
	return yes
}

func (a tri) or(b tri) tri {
	switch {
	case a == yes || b == yes:
		return yes
	case a == unknown || b == unknown:
		return unknown
	}
	return no
}

// kind is the Spark type class of a value or a literal.
type kind int8

const (
	kText    kind = iota
	kInt          // an integral type of bits bits (0: wider than BIGINT)
	kDecimal      // an exact decimal number
	kDouble       // a floating-point number
	kDate         // a DATE: num is its day number
)

// number is a numeric value: exact (r) unless float is set.
type number struct {
	r     *big.Rat
	f     float64
	float bool
}

func (n number) float64() float64 {
	if n.float {
		return n.f
	}
	f, _ := n.r.Float64()
	return f
}

// cmpNumbers compares two numbers: exactly unless one is a floating-point
// number, then as doubles, NaN equal to itself and above every other value
// (Spark's order).
func cmpNumbers(a, b number) int {
	if !a.float && !b.float {
		return a.r.Cmp(b.r)
	}
	x, y := a.float64(), b.float64()
	switch xn, yn := math.IsNaN(x), math.IsNaN(y); {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// value is one partition value, converted to its key's type.
type value struct {
	null bool
	kind kind
	bits int    // kInt: the key type's width
	text string // kText: the value; else the folder's text
	num  number
}

// hiveNull is the folder value Hive and Spark write for NULL.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// partitionValue converts a partition folder's value to its key's type, as
// Spark casts it: a value the type cannot hold is NULL.
func partitionValue(typ, text string) value {
	if text == hiveNull {
		return value{null: true}
	}
	t := strings.ToUpper(strings.TrimSpace(typ))
	bits := map[string]int{"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "INT": 32, "BIGINT": 64,
		"HUGEINT": 0, "UTINYINT": 16, "USMALLINT": 32, "UINTEGER": 64, "UBIGINT": 0, "UHUGEINT": 0}
	if b, ok := bits[t]; ok {
		n, ok := castInt(text, b)
		return value{null: !ok, kind: kInt, bits: b, text: text, num: n}
	}
	switch {
	case t == "DATE":
		n, ok := castDate(text)
		return value{null: !ok, kind: kDate, text: text, num: n}
	case t == "FLOAT" || t == "REAL" || t == "DOUBLE":
		n, ok := castDouble(text)
		return value{null: !ok, kind: kDouble, text: text, num: n}
	case strings.HasPrefix(t, "DECIMAL") || strings.HasPrefix(t, "NUMERIC"):
		r, ok := new(big.Rat).SetString(strings.TrimFunc(text, sparkSpace))
		return value{null: !ok, kind: kDecimal, text: text, num: number{r: r}}
	}
	return value{kind: kText, text: text}
}

// literal is a literal of the predicate, typed as Spark types it: a
// number without '.' or exponent is an INT, a BIGINT, or a DECIMAL when
// wider; with '.' a DECIMAL of that scale; with an exponent a DOUBLE.
type literal struct {
	text  string
	kind  kind
	bits  int // kInt: 32 or 64
	scale int // kDecimal: digits after '.'
	num   number
}

func numberLiteral(text string) literal {
	l := literal{text: text}
	switch {
	case strings.ContainsAny(text, "eE"):
		f, _ := strconv.ParseFloat(text, 64)
		l.kind, l.num = kDouble, number{f: f, float: true}
	case strings.Contains(text, "."):
		r, _ := new(big.Rat).SetString(text)
		_, frac, _ := strings.Cut(text, ".")
		l.kind, l.scale, l.num = kDecimal, len(frac), number{r: r}
	default:
		i, _ := new(big.Int).SetString(text, 10)
		l.kind, l.num = kDecimal, number{r: new(big.Rat).SetInt(i)}
		switch {
		case i.IsInt64() && i.Int64() >= math.MinInt32 && i.Int64() <= math.MaxInt32:
			l.kind, l.bits = kInt, 32
		case i.IsInt64():
			l.kind, l.bits = kInt, 64
		}
	}
	return l
}

// compare compares a partition value with a literal after Spark's
// implicit casts: text against an integral literal is cast to the
// literal's type, text against a decimal or double literal to DOUBLE, a
// text literal against a numeric key to the key's type. ok is false when
// the comparison is NULL: the value is NULL, or a cast failed.
func compare(v value, l literal) (int, bool) {
	if v.null {
		return 0, false
	}
	switch {
	case v.kind == kText && l.kind == kText:
		return strings.Compare(v.text, l.text), true
	case v.kind == kText && l.kind == kInt:
		n, ok := castInt(v.text, l.bits)
		if !ok {
			return 0, false
		}
		return cmpNumbers(n, l.num), true
	case v.kind == kText:
		n, ok := castDouble(v.text)
		if !ok {
			return 0, false
		}
		return cmpNumbers(n, l.num), true
	case l.kind == kText:
		var n number
		ok := false
		switch v.kind {
		case kDate:
			n, ok = castDate(l.text)
		case kInt:
			n, ok = castInt(l.text, v.bits)
		case kDecimal:
			var r *big.Rat
			r, ok = new(big.Rat).SetString(strings.TrimFunc(l.text, sparkSpace))
			n = number{r: r}
		default:
			n, ok = castDouble(l.text)
		}
		if !ok {
			return 0, false
		}
		return cmpNumbers(v.num, n), true
	}
	return cmpNumbers(v.num, l.num), true
}

// inAsText reports whether Spark compares an IN list as text: when the
// value or any literal is text, every side is cast to text.
func inAsText(v value, lits []literal) bool {
	if v.kind == kText {
		return true
	}
	for _, l := range lits {
		if l.kind == kText {
			return true
		}
	}
	return false
}

// asText is a (non-NULL) value cast to text, as Spark writes its type.
func (v value) asText() string {
	switch v.kind {
	case kInt:
		return v.num.r.FloatString(0)
	case kDouble:
		return javaDouble(v.num.f)
	case kDate:
		d, _ := v.num.r.Float64()
		return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
	}
	return v.text
}

// asText is a literal cast to text, each in its own type (Spark casts an
// IN list's numbers to text one by one: '2' IN (1.5, 2) is true).
func (l literal) asText() string {
	switch l.kind {
	case kDouble:
		return javaDouble(l.num.f)
	case kDecimal:
		return l.num.r.FloatString(l.scale)
	case kInt:
		return l.num.r.FloatString(0)
	}
	return l.text
}

// javaDouble formats f as Java's Double.toString does (Spark's cast of a
// DOUBLE to text): 1000.0, 1.5, 1.0E7, 1.0E-4.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// sparkSpace is what Spark trims from text before casting it to a number:
// spaces and control characters.
func sparkSpace(r rune) bool { return r <= ' ' }

// castInt casts text to an integral type of bits bits (0: any width) as
// Spark does: surrounding spaces trimmed, a sign, digits, and a fraction
// that is dropped ("7.9" is 7, ".5" is 0); anything else, or a number the
// type cannot hold, fails (NULL).
func castInt(text string, bits int) (number, bool) {
	s := strings.TrimFunc(text, sparkSpace)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, s = s[0] == '-', s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || !allDigits(whole) || !allDigits(frac) {
		return number{}, false
	}
	if whole == "" {
		whole = "0"
	}
	i, _ := new(big.Int).SetString(whole, 10)
	if neg {
		i.Neg(i)
	}
	if bits > 0 {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(bits-1))
		if i.Cmp(lim) >= 0 || i.Cmp(new(big.Int).Neg(lim)) < 0 {
			return number{}, false
		}
	}
	return number{r: new(big.Rat).SetInt(i)}, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// castDouble casts text to DOUBLE as Spark does (Java's
// Double.parseDouble): surrounding spaces trimmed, NaN and Infinity
// spelled so, an optional d or f suffix; anything else fails (NULL).
func castDouble(text string) (number, bool) {
	s := strings.TrimFunc(text, sparkSpace)
	switch s {
	case "NaN":
		return number{f: math.NaN(), float: true}, true
	case "Infinity", "+Infinity":
		return number{f: math.Inf(1), float: true}, true
	case "-Infinity":
		return number{f: math.Inf(-1), float: true}, true
	}
	if n := len(s); n > 1 && strings.IndexByte("dDfF", s[n-1]) >= 0 && !strings.HasPrefix(strings.TrimLeft(s, "+-"), "0x") {
		s = s[:n-1]
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return number{}, false // Go's ParseFloat also reads inf, nan, hex and '_'
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRange(err) {
		return number{}, false
	}
	return number{f: f, float: true}, true
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// castDate casts text to DATE as Spark does: surrounding spaces trimmed,
// a year of 4 to 7 digits with an optional sign, then optionally -month
// and -day of one or two digits, then the end or a space or T and
// anything ('2026', '2026-1-5', '2026-01-10 12:00'); a day the calendar
// does not have fails (NULL). num is the day number since 1970-01-01.
func castDate(text string) (number, bool) {
	s := strings.TrimFunc(text, sparkSpace)
	if i := strings.IndexAny(s, " T"); i >= 0 {
		s = s[:i]
	}
	sign := 1
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) < 4 || len(parts[0]) > 7 {
		return number{}, false
	}
	f := []int{0, 1, 1}
	for i, p := range parts {
		if p == "" || !allDigits(p) || i > 0 && len(p) > 2 {
			return number{}, false
		}
		f[i], _ = strconv.Atoi(p) // at most 7 digits, decimal

	}
	y := sign * f[0]
	d := time.Date(y, time.Month(f[1]), f[2], 0, 0, 0, 0, time.UTC)
	if d.Year() != y || int(d.Month()) != f[1] || d.Day() != f[2] {
		return number{}, false
	}
	return number{r: new(big.Rat).SetInt64(d.Unix() / 86400)}, true
}
