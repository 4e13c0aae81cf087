package bookmark

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is the kind of a column Type.
type Kind int

// Kinds of the type model. Scalar kinds print as the SQL names recorded
// schemas already hold; List, Struct and Map print as ARRAY<T>,
// STRUCT<name: T, ...> and MAP<K, V>. Other is a type the model does not
// name (an ENUM, a UNION, a fixed-size array, a geometry): it keeps the
// engine's text verbatim, and an engine or dialect that does not know that
// text rejects it.
const (
	Other Kind = iota
	Boolean
	TinyInt
	SmallInt
	Integer
	BigInt
	HugeInt
	UTinyInt
	USmallInt
	UInteger
	UBigInt
	UHugeInt
	Float
	Double
	Decimal
	Varchar
	Blob
	Date
	Time
	TimeTZ
	Timestamp
	TimestampS
	TimestampMS
	TimestampNS
	TimestampTZ
	Interval
	UUID
	JSON
	Bit
	List
	Struct
	Map
)

// Type is an engine-neutral column type: what a recorded schema says a
// column holds, independent of the engine that read it or the database it
// came from. Its text (String) is canonical: two types are the same type
// exactly when their texts are equal.
type Type struct {
	Kind Kind
	// Precision and Scale of a Decimal.
	Precision, Scale int
	// Elem is a List's element type or a Map's value type.
	Elem *Type
	// Key is a Map's key type.
	Key *Type
	// Fields are a Struct's fields, in order.
	Fields []Field
	// Name is an Other type's text, verbatim.
	Name string
}

// Field is one field of a Struct type.
type Field struct {
	Name string
	Type Type
}

// scalarNames are the canonical texts of the scalar kinds.
var scalarNames = map[Kind]string{
	Boolean: "BOOLEAN", TinyInt: "TINYINT", SmallInt: "SMALLINT", Integer: "INTEGER", BigInt: "BIGINT",
	HugeInt: "HUGEINT", UTinyInt: "UTINYINT", USmallInt: "USMALLINT", UInteger: "UINTEGER", UBigInt: "UBIGINT",
	UHugeInt: "UHUGEINT", Float: "FLOAT", Double: "DOUBLE", Varchar: "VARCHAR", Blob: "BLOB", Date: "DATE",
	Time: "TIME", TimeTZ: "TIME WITH TIME ZONE", Timestamp: "TIMESTAMP", TimestampS: "TIMESTAMP_S",
	TimestampMS: "TIMESTAMP_MS", TimestampNS: "TIMESTAMP_NS", TimestampTZ: "TIMESTAMP WITH TIME ZONE",
	Interval: "INTERVAL", UUID: "UUID", JSON: "JSON", Bit: "BIT",
}

// aliases are other spellings ParseType accepts for scalar kinds: DuckDB's
// and the SQL standard's synonyms.
var aliases = map[string]Kind{
	"BOOL": Boolean, "LOGICAL": Boolean,
	"INT1": TinyInt, "INT2": SmallInt, "SHORT": SmallInt, "INT": Integer, "INT4": Integer, "SIGNED": Integer,
	"INT8": BigInt, "LONG": BigInt, "INT128": HugeInt, "UINT8": UTinyInt, "UINT16": USmallInt,
	"UINT32": UInteger, "UINT64": UBigInt, "UINT128": UHugeInt,
	"FLOAT4": Float, "REAL": Float, "FLOAT8": Double, "DOUBLE PRECISION": Double,
	"STRING": Varchar, "TEXT": Varchar, "CHAR": Varchar, "BPCHAR": Varchar, "NVARCHAR": Varchar,
	"CHARACTER VARYING": Varchar, "BYTEA": Blob, "BINARY": Blob, "VARBINARY": Blob,
	"TIMETZ": TimeTZ, "DATETIME": Timestamp, "TIMESTAMP WITHOUT TIME ZONE": Timestamp,
	"TIMESTAMPTZ": TimestampTZ, "BITSTRING": Bit,
}

// byName maps every accepted scalar name to its kind.
var byName = func() map[string]Kind {
	m := map[string]Kind{}
	for k, n := range scalarNames {
		m[n] = k
	}
	for n, k := range aliases {
		m[n] = k
	}
	return m
}()

// Scalar returns the type of scalar kind k (not Decimal, List, Struct, Map
// or Other).
func Scalar(k Kind) Type { return Type{Kind: k} }

// DecimalOf returns DECIMAL(p,s).
func DecimalOf(p, s int) Type { return Type{Kind: Decimal, Precision: p, Scale: s} }

// ListOf returns ARRAY<elem>.
func ListOf(elem Type) Type { return Type{Kind: List, Elem: &elem} }

// MapOf returns MAP<key, value>.
func MapOf(key, value Type) Type { return Type{Kind: Map, Key: &key, Elem: &value} }

// StructOf returns STRUCT<fields>.
func StructOf(fields ...Field) Type { return Type{Kind: Struct, Fields: fields} }

// Integral reports whether t is a signed or unsigned integer type.
func (t Type) Integral() bool { return t.Kind >= TinyInt && t.Kind <= UHugeInt }

// Nested reports whether t is a List, Struct or Map.
func (t Type) Nested() bool { return t.Kind == List || t.Kind == Struct || t.Kind == Map }

// Equal reports whether t and u are the same type.
func (t Type) Equal(u Type) bool { return t.String() == u.String() }

// String returns t's canonical text, which ParseType reads back as t.
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.Kind {
	case Other:
		b.WriteString(t.Name)
	case Decimal:
		fmt.Fprintf(b, "DECIMAL(%d,%d)", t.Precision, t.Scale)
	case List:
		b.WriteString("ARRAY<")
		t.Elem.write(b)
		b.WriteByte('>')
	case Map:
		b.WriteString("MAP<")
		t.Key.write(b)
		b.WriteString(", ")
		t.Elem.write(b)
		b.WriteByte('>')
	case Struct:
		b.WriteString("STRUCT<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteField(f.Name))
			b.WriteString(": ")
			f.Type.write(b)
		}
		b.WriteByte('>')
	default:
		b.WriteString(scalarNames[t.Kind])
	}
}

// QuoteField returns a struct field name as the type texts spell it: bare
// when it is a plain identifier, else in double quotes with inner double
// quotes doubled.
func QuoteField(name string) string {
	if isIdent(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// MustParseType is ParseType for texts known to be valid; it panics on
// error.
func MustParseType(s string) Type {
	t, err := ParseType(s)
	if err != nil {
		panic(err)
	}
	return t
}

// ParseType reads a type's text: the canonical text (String) and DuckDB's
// spellings, which schemas recorded before the type model hold (INTEGER[],
// STRUCT(a INTEGER), MAP(VARCHAR, BIGINT), TIMESTAMPTZ, NUMERIC(10,2)).
// Names are case-insensitive. A name the model does not know is an Other
// type holding the text as given.
func ParseType(s string) (Type, error) {
	p := &typeParser{s: s}
	t, err := p.parse()
	if err != nil {
		return Type{}, fmt.Errorf("type %q: %w", s, err)
	}
	p.space()
	if p.i < len(p.s) {
		return Type{}, fmt.Errorf("type %q: unexpected %q at offset %d", s, p.s[p.i:], p.i)
	}
	return t, nil
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// peek returns the next non-space byte (0 at the end).
func (p *typeParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *typeParser) expect(c byte) error {
	if p.peek() != c {
		if p.i >= len(p.s) {
			return fmt.Errorf("want %q, got the end", c)
		}
		return fmt.Errorf("want %q at offset %d, got %q", c, p.i, p.s[p.i])
	}
	p.i++
	return nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// word reads one word at the cursor ("" if none).
func (p *typeParser) word() string {
	p.space()
	start := p.i
	for p.i < len(p.s) && isWordByte(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// parse reads one type and its [] suffixes.
func (p *typeParser) parse() (Type, error) {
	p.space()
	start := p.i
	t, err := p.base()
	if err != nil {
		return t, err
	}
	for p.peek() == '[' {
		p.i++
		if p.peek() == ']' {
			p.i++
			t = ListOf(t)
			continue
		}
		// A fixed-size array (INTEGER[3]) is not in the model.
		if n := p.word(); n == "" || strings.Trim(n, "0123456789") != "" {
			return t, fmt.Errorf("want ] or an array size at offset %d", p.i)
		}
		if err := p.expect(']'); err != nil {
			return t, err
		}
		t = Type{Kind: Other, Name: p.s[start:p.i]}
	}
	return t, nil
}

// base reads a type without [] suffixes.
func (p *typeParser) base() (Type, error) {
	start := p.i
	first := p.word()
	if first == "" {
		return Type{}, fmt.Errorf("want a type name at offset %d", p.i)
	}
	name := strings.ToUpper(first)
	switch c := p.peek(); {
	case name == "ARRAY" && c == '<', name == "LIST" && c == '<':
		p.i++
		elem, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		return ListOf(elem), p.expect('>')
	case name == "MAP" && (c == '<' || c == '('):
		return p.mapType(closer(c))
	case name == "STRUCT" && (c == '<' || c == '('), name == "ROW" && c == '(':
		return p.structType(closer(c))
	}
	// A scalar: words (TIMESTAMP WITH TIME ZONE), maybe (arguments).
	words := []string{name}
	for {
		save := p.i
		w := p.word()
		if w == "" {
			p.i = save
			break
		}
		words = append(words, strings.ToUpper(w))
	}
	full := strings.Join(words, " ")
	var args []string
	if p.peek() == '(' {
		open := p.i
		if err := p.skipGroup(); err != nil {
			return Type{}, err
		}
		args = strings.Split(p.s[open+1:p.i-1], ",")
	}
	k, known := byName[full]
	switch {
	case (full == "DECIMAL" || full == "NUMERIC") && len(args) <= 2:
		return decimalArgs(args)
	case known && args == nil:
		return Scalar(k), nil
	case known && k == Varchar && len(args) == 1 && isNumber(args[0]):
		return Scalar(k), nil // VARCHAR(n): the length is not kept
	}
	return Type{Kind: Other, Name: strings.TrimSpace(p.s[start:p.i])}, nil
}

func closer(open byte) byte {
	if open == '(' {
		return ')'
	}
	return '>'
}

func isNumber(s string) bool {
	s = strings.TrimSpace(s)
	_, err := strconv.Atoi(s)
	return err == nil && s != "" && s[0] != '+' && s[0] != '-'
}

// decimalArgs makes DECIMAL from its arguments; no arguments is DuckDB's
// default DECIMAL(18,3).
func decimalArgs(args []string) (Type, error) {
	p, s := 18, 3
	var err error
	if len(args) >= 1 {
		if !isNumber(args[0]) {
			return Type{}, fmt.Errorf("decimal precision %q is not a number", args[0])
		}
		p, _ = strconv.Atoi(strings.TrimSpace(args[0]))
		s = 0
	}
	if len(args) == 2 {
		if !isNumber(args[1]) {
			return Type{}, fmt.Errorf("decimal scale %q is not a number", args[1])
		}
		s, _ = strconv.Atoi(strings.TrimSpace(args[1]))
	}
	if p < 1 || p > 38 || s > p {
		return Type{}, fmt.Errorf("DECIMAL(%d,%d): want 1 <= precision <= 38 and scale <= precision", p, s)
	}
	return DecimalOf(p, s), err
}

// skipGroup moves past a balanced (...) group, quotes included.
func (p *typeParser) skipGroup() error {
	depth := 0
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				p.i++
				return nil
			}
		case '\'', '"':
			end := strings.IndexByte(p.s[p.i+1:], c)
			if end < 0 {
				return fmt.Errorf("unclosed %c", c)
			}
			p.i += end + 1
		}
		p.i++
	}
	return fmt.Errorf("unclosed (")
}

func (p *typeParser) mapType(end byte) (Type, error) {
	p.i++
	k, err := p.parse()
	if err != nil {
		return Type{}, err
	}
	if err := p.expect(','); err != nil {
		return Type{}, err
	}
	v, err := p.parse()
	if err != nil {
		return Type{}, err
	}
	return MapOf(k, v), p.expect(end)
}

func (p *typeParser) structType(end byte) (Type, error) {
	p.i++
	t := Type{Kind: Struct, Fields: []Field{}}
	if p.peek() == end {
		p.i++
		return t, nil
	}
	for {
		name, err := p.fieldName()
		if err != nil {
			return Type{}, err
		}
		if p.peek() == ':' {
			p.i++
		}
		ft, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		t.Fields = append(t.Fields, Field{Name: name, Type: ft})
		if p.peek() == ',' {
			p.i++
			continue
		}
		return t, p.expect(end)
	}
}

// fieldName reads a bare or double-quoted struct field name.
func (p *typeParser) fieldName() (string, error) {
	if p.peek() != '"' {
		if w := p.word(); w != "" {
			return w, nil
		}
		return "", fmt.Errorf("want a field name at offset %d", p.i)
	}
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		if p.s[p.i] == '"' {
			if p.i+1 < len(p.s) && p.s[p.i+1] == '"' {
				b.WriteByte('"')
				p.i++
				continue
			}
			p.i++
			return b.String(), nil
		}
		b.WriteByte(p.s[p.i])
	}
	return "", fmt.Errorf("unclosed field name")
}
