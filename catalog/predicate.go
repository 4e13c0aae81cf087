package catalog

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Predicate is a parsed push_down_predicate: a condition on a table's
// partition values that prunes partitions before anything is listed
// (Glue's push_down_predicate). The language is small: comparisons of a
// partition key with a literal (= or ==, != <> < <= > >=), IN (...), NOT IN,
// AND, OR, NOT and parentheses; string literals in single quotes (” is a
// quote), number literals; keywords in any case. It is evaluated as Spark
// SQL evaluates it (Match).
type Predicate struct {
	text string
	root node
}

// String returns the predicate as written.
func (p *Predicate) String() string { return p.text }

// Match reports whether a partition with values (in the order of keys,
// the table's partition keys) satisfies p, as Spark SQL (Glue's engine,
// spark.sql.ansi.enabled false) would: a value is converted to its key's
// type, a comparison of a text and a number converts as Spark does (see
// compare), and a comparison that cannot be made is NULL, with SQL's
// three-valued logic for NOT, AND and OR. A partition is read only when
// the predicate is true: NULL reads nothing. A missing value and Hive's
// __HIVE_DEFAULT_PARTITION__ are NULL.
func (p *Predicate) Match(keys []Column, values []string) bool {
	row := make(map[string]value, len(keys))
	for i, k := range keys {
		if i < len(values) {
			row[strings.ToLower(k.Name)] = partitionValue(k.Type, values[i])
		}
	}
	return p.root.eval(row) == yes
}

// ParsePredicate parses expr against the partition keys it may name (nil:
// any name, to check the syntax alone); an unknown key, or anything the
// language does not have, is an error that says where.
func ParsePredicate(expr string, keys []Column) (*Predicate, error) {
	var known map[string]bool // nil: any key (a check of the syntax alone)
	if keys != nil {
		known = map[string]bool{}
	}
	for _, k := range keys {
		known[strings.ToLower(k.Name)] = true
	}
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	ps := &parser{toks: toks, known: known, keys: keys}
	n, err := ps.or()
	if err != nil {
		return nil, err
	}
	if t := ps.peek(); t.kind != tEOF {
		return nil, fmt.Errorf("push_down_predicate %q: unexpected %s at offset %d", expr, t, t.pos)
	}
	return &Predicate{text: expr, root: n}, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tOp     // = != <> < <= > >=
	tLParen // (
	tRParen // )
	tComma
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of predicate"
	case tString:
		return fmt.Sprintf("string '%s'", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

func lex(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, token{tLParen, "(", i})
			i++
		case c == ')':
			out = append(out, token{tRParen, ")", i})
			i++
		case c == ',':
			out = append(out, token{tComma, ",", i})
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, fmt.Errorf("push_down_predicate %q: string at offset %d is not closed", s, i)
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			out = append(out, token{tString, b.String(), i})
			i = j + 1
		case c == '=' || c == '<' || c == '>' || c == '!':
			op := string(c)
			if i+1 < len(s) && (s[i+1] == '=' || c == '<' && s[i+1] == '>') {
				op += string(s[i+1])
			}
			if op == "!" {
				return nil, fmt.Errorf("push_down_predicate %q: '!' at offset %d: use != or NOT", s, i)
			}
			n := len(op)
			if op == "==" {
				op = "=" // Spark SQL's spelling of =, as Glue's own examples write it
			}
			out = append(out, token{tOp, op, i})
			i += n
		case c == '-' || c == '.' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && (s[j] == '.' || s[j] >= '0' && s[j] <= '9' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			if _, err := strconv.ParseFloat(s[i:j], 64); err != nil {
				return nil, fmt.Errorf("push_down_predicate %q: bad number %q at offset %d", s, s[i:j], i)
			}
			out = append(out, token{tNumber, s[i:j], i})
			i = j
		case c == '`' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("push_down_predicate %q: quoted name at offset %d is not closed", s, i)
			}
			out = append(out, token{tIdent, s[i+1 : i+1+j], i})
			i += j + 2
		case c == '_' || unicode.IsLetter(rune(c)) || c >= 0x80:
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 0x80 || unicode.IsLetter(rune(s[j])) || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			out = append(out, token{tIdent, s[i:j], i})
			i = j
		default:
			return nil, fmt.Errorf("push_down_predicate %q: unexpected %q at offset %d", s, c, i)
		}
	}
	return append(out, token{tEOF, "", len(s)}), nil
}

type parser struct {
	toks  []token
	i     int
	known map[string]bool
	keys  []Column
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

// keyword reports whether the next token is the keyword w, and takes it.
func (p *parser) keyword(w string) bool {
	if t := p.peek(); t.kind == tIdent && strings.EqualFold(t.text, w) {
		p.i++
		return true
	}
	return false
}

func (p *parser) fail(t token, want string) error {
	return fmt.Errorf("push_down_predicate: want %s at offset %d, got %s", want, t.pos, t)
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = orNode{l, r}
	}
	return l, nil
}

func (p *parser) and() (node, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = andNode{l, r}
	}
	return l, nil
}

func (p *parser) not() (node, error) {
	if p.keyword("NOT") {
		n, err := p.not()
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case tLParen:
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, p.fail(c, "')'")
		}
		return n, nil
	case tIdent:
		key := strings.ToLower(t.text)
		if p.known != nil && !p.known[key] {
			return nil, fmt.Errorf("push_down_predicate: %q at offset %d is not a partition key of the table (partition keys: %s)",
				t.text, t.pos, strings.Join(ColumnNames(p.keys), ", "))
		}
		negate := p.keyword("NOT")
		if p.keyword("IN") {
			if c := p.next(); c.kind != tLParen {
				return nil, p.fail(c, "'(' after IN")
			}
			var lits []literal
			for {
				l, err := p.literal()
				if err != nil {
					return nil, err
				}
				lits = append(lits, l)
				c := p.next()
				if c.kind == tRParen {
					break
				}
				if c.kind != tComma {
					return nil, p.fail(c, "',' or ')'")
				}
			}
			for _, l := range lits {
				if err := p.comparable(t, l); err != nil {
					return nil, err
				}
			}
			var n node = inNode{key, lits}
			if negate {
				n = notNode{n}
			}
			return n, nil
		}
		if negate {
			return nil, p.fail(p.peek(), "IN after NOT")
		}
		op := p.next()
		if op.kind != tOp {
			return nil, p.fail(op, "a comparison (= != < <= > >=) or IN")
		}
		l, err := p.literal()
		if err != nil {
			return nil, err
		}
		if err := p.comparable(t, l); err != nil {
			return nil, err
		}
		return cmpNode{key, op.text, l}, nil
	}
	return nil, p.fail(t, "a partition key, NOT or '('")
}

// comparable refuses a number compared with a DATE key, as Spark SQL
// refuses it (DATATYPE_MISMATCH): a date is written in quotes.
func (p *parser) comparable(key token, l literal) error {
	for _, k := range p.keys {
		if strings.EqualFold(k.Name, key.text) && strings.EqualFold(strings.TrimSpace(k.Type), "DATE") && l.kind != kText {
			return fmt.Errorf("push_down_predicate: %q at offset %d is a DATE key, compared with the number %s: "+
				"write the date in quotes ('2026-01-10')", key.text, key.pos, l.text)
		}
	}
	return nil
}

func (p *parser) literal() (literal, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return literal{text: t.text}, nil
	case tNumber:
		return numberLiteral(t.text), nil
	}
	return literal{}, p.fail(t, "a string ('...') or a number")
}

type node interface {
	eval(row map[string]value) tri
}

type orNode struct{ l, r node }
type andNode struct{ l, r node }
type notNode struct{ n node }
type cmpNode struct {
	key string
	op  string
	lit literal
}
type inNode struct {
	key  string
	lits []literal
}

func (n orNode) eval(row map[string]value) tri  { return n.l.eval(row).or(n.r.eval(row)) }
func (n andNode) eval(row map[string]value) tri { return n.l.eval(row).and(n.r.eval(row)) }
func (n notNode) eval(row map[string]value) tri { return n.n.eval(row).not() }

func (n cmpNode) eval(row map[string]value) tri {
	c, ok := compare(row[n.key], n.lit)
	if !ok {
		return unknown
	}
	switch n.op {
	case "=":
		return truth(c == 0)
	case "!=", "<>":
		return truth(c != 0)
	case "<":
		return truth(c < 0)
	case "<=":
		return truth(c <= 0)
	case ">":
		return truth(c > 0)
	case ">=":
		return truth(c >= 0)
	}
	return unknown
}

func (n inNode) eval(row map[string]value) tri {
	v := row[n.key]
	out := no
	if inAsText(v, n.lits) {
		if v.null {
			return unknown
		}
		text := v.asText()
		for _, l := range n.lits {
			if l.asText() == text {
				return yes
			}
		}
		return no
	}
	for _, l := range n.lits {
		c, ok := compare(v, l)
		switch {
		case !ok:
			out = unknown
		case c == 0:
			return yes
		}
	}
	return out
}
