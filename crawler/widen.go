package crawler

import (
	"github.com/tidemark-etl/tidemark/bookmark"
)

// Widen returns the narrowest type that holds every value of a and of b:
// the same type when they agree; a wider integer (INTEGER ⊔ BIGINT is
// BIGINT); DOUBLE for integers and floats together; a DECIMAL wide enough
// for two decimals, or for a decimal and an integer that fits; TIMESTAMP
// for a DATE and a TIMESTAMP; nested types field by field (a struct's
// fields are the union, in first-seen order); VARCHAR for anything else.
// It never narrows: Widen(a, b) holds a, and holds b, and Widen is
// commutative except for the order of struct fields.
func Widen(a, b bookmark.Type) bookmark.Type {
	if a.Equal(b) {
		return a
	}
	switch {
	case a.Kind == bookmark.Varchar || b.Kind == bookmark.Varchar:
		return varchar
	case a.Integral() && b.Integral():
		return widerInteger(a, b)
	case numeric(a) && numeric(b):
		return widenNumeric(a, b)
	case temporal(a) && temporal(b) && (a.Kind == bookmark.Date || b.Kind == bookmark.Date):
		// A date is midnight of its day.
		if a.Kind == bookmark.Date {
			return b
		}
		return a
	case a.Kind == bookmark.List && b.Kind == bookmark.List:
		return bookmark.ListOf(Widen(*a.Elem, *b.Elem))
	case a.Kind == bookmark.Map && b.Kind == bookmark.Map:
		return bookmark.MapOf(Widen(*a.Key, *b.Key), Widen(*a.Elem, *b.Elem))
	case a.Kind == bookmark.Struct && b.Kind == bookmark.Struct:
		return bookmark.StructOf(widenFields(a.Fields, b.Fields)...)
	}
	return varchar
}

var (
	varchar = bookmark.Scalar(bookmark.Varchar)
	bigint  = bookmark.Scalar(bookmark.BigInt)
	double  = bookmark.Scalar(bookmark.Double)
)

// Narrower reports whether a holds only values that b holds too and is
// not b: b is a widening of a.
func Narrower(a, b bookmark.Type) bool { return !a.Equal(b) && Widen(a, b).Equal(b) }

func numeric(t bookmark.Type) bool {
	return t.Integral() || t.Kind == bookmark.Float || t.Kind == bookmark.Double || t.Kind == bookmark.Decimal
}

func temporal(t bookmark.Type) bool {
	switch t.Kind {
	case bookmark.Date, bookmark.Timestamp, bookmark.TimestampS, bookmark.TimestampMS, bookmark.TimestampNS:
		return true
	}
	return false
}

// intBits are the value ranges of the integer kinds: bits and whether the
// kind is signed.
var intBits = map[bookmark.Kind]struct {
	bits   int
	signed bool
}{
	bookmark.TinyInt: {8, true}, bookmark.SmallInt: {16, true}, bookmark.Integer: {32, true}, bookmark.BigInt: {64, true},
	bookmark.HugeInt: {128, true}, bookmark.UTinyInt: {8, false}, bookmark.USmallInt: {16, false},
	bookmark.UInteger: {32, false}, bookmark.UBigInt: {64, false}, bookmark.UHugeInt: {128, false},
}

// signedOfBits are the signed kinds by width.
var signedOfBits = map[int]bookmark.Kind{8: bookmark.TinyInt, 16: bookmark.SmallInt, 32: bookmark.Integer,
	64: bookmark.BigInt, 128: bookmark.HugeInt}

// widerInteger is the narrowest integer kind holding both: the wider
// signed kind, one step wider still for an unsigned kind as wide as the
// signed one; DOUBLE past 128 bits.
func widerInteger(a, b bookmark.Type) bookmark.Type {
	x, y := intBits[a.Kind], intBits[b.Kind]
	if x.signed == y.signed {
		if x.bits >= y.bits {
			return a
		}
		return b
	}
	if !x.signed {
		x, y = y, x
	}
	// x signed, y unsigned: the signed kind must hold y's range.
	bits := max(x.bits, y.bits*2)
	if k, ok := signedOfBits[bits]; ok {
		return bookmark.Scalar(k)
	}
	return double
}

// decimalDigits is how many decimal digits an integer kind needs.
var decimalDigits = map[int]int{8: 3, 16: 5, 32: 10, 64: 20, 128: 39}

// widenNumeric joins two numeric types of which one at least is not an
// integer.
func widenNumeric(a, b bookmark.Type) bookmark.Type {
	if a.Kind != bookmark.Decimal {
		a, b = b, a
	}
	if a.Kind == bookmark.Decimal {
		var intDigits, scale int
		switch {
		case b.Kind == bookmark.Decimal:
			intDigits, scale = max(a.Precision-a.Scale, b.Precision-b.Scale), max(a.Scale, b.Scale)
		case b.Integral():
			intDigits, scale = max(a.Precision-a.Scale, decimalDigits[intBits[b.Kind].bits]), a.Scale
		default:
			return double
		}
		if intDigits+scale <= 38 {
			return bookmark.DecimalOf(intDigits+scale, scale)
		}
		return double
	}
	// Floats and integers: DOUBLE, except two FLOATs (equal, handled above).
	return double
}

// widenFields is the union of two structs' fields, a's order first, the
// fields both have widened.
func widenFields(a, b []bookmark.Field) []bookmark.Field {
	out := make([]bookmark.Field, 0, len(a)+len(b))
	idx := map[string]int{}
	for _, f := range a {
		idx[f.Name] = len(out)
		out = append(out, f)
	}
	for _, f := range b {
		if i, ok := idx[f.Name]; ok {
			out[i].Type = Widen(out[i].Type, f.Type)
			continue
		}
		idx[f.Name] = len(out)
		out = append(out, f)
	}
	return out
}
