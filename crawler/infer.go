package crawler

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// A schema is being inferred column by column: a column seen only with
// empty values (or JSON nulls) has no type yet, and is VARCHAR in the end.

// column is one inferred column.
type column struct {
	Name  string
	Type  bookmark.Type
	Known bool // some value gave it a type
}

// schema is an ordered set of columns.
type schema []column

// observe widens column i with t.
func (s schema) observe(i int, t bookmark.Type) {
	if !s[i].Known {
		s[i].Type, s[i].Known = t, true
		return
	}
	s[i].Type = Widen(s[i].Type, t)
}

// merge is the union of s and o, s's order first, the columns both have
// widened (by name, exactly).
func (s schema) merge(o schema) schema {
	out := make(schema, len(s), len(s)+len(o))
	copy(out, s)
	idx := make(map[string]int, len(s))
	for i, c := range out {
		idx[c.Name] = i
	}
	for _, c := range o {
		i, ok := idx[c.Name]
		if !ok {
			idx[c.Name] = len(out)
			out = append(out, c)
			continue
		}
		if c.Known {
			out.observe(i, c.Type)
		}
	}
	return out
}

// names is the column names, in order.
func (s schema) names() []string {
	out := make([]string, len(s))
	for i, c := range s {
		out[i] = c.Name
	}
	return out
}

// final is the schema with every column typed (VARCHAR for the unknown).
func (s schema) final() schema {
	out := make(schema, len(s))
	for i, c := range s {
		if !c.Known {
			c.Type, c.Known = varchar, true
		}
		out[i] = c
	}
	return out
}

var (
	intRE   = regexp.MustCompile(`^[+-]?(0|[1-9][0-9]*)$`)
	floatRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
	dateRE  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	tsRE    = regexp.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$`)
)

var timestampTZ = bookmark.Scalar(bookmark.TimestampTZ)

// textType is the type of one text value (a CSV field, a JSON string with
// numbers false), and false for an empty one, which says nothing:
// BOOLEAN (true/false), BIGINT (no leading zeros: "007" is a code, kept
// as text; past BIGINT's range text too), DOUBLE, DATE (YYYY-MM-DD), TIMESTAMP (a date, a space or T, a
// time; with Z or an offset TIMESTAMP WITH TIME ZONE), else VARCHAR.
func textType(v string, numbers bool) (bookmark.Type, bool) {
	if v == "" {
		return bookmark.Type{}, false
	}
	if numbers {
		switch strings.ToLower(v) {
		case "true", "false":
			return bookmark.Scalar(bookmark.Boolean), true
		}
		if intRE.MatchString(v) {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return bigint, true
			}
			// Too long for BIGINT: an identifier, whose digits a DOUBLE
			// would lose.
			return varchar, true
		}
		if floatRE.MatchString(v) && !leadingZero(v) {
			return double, true
		}
	}
	if dateRE.MatchString(v) {
		if _, err := time.Parse("2006-01-02", v); err == nil {
			return bookmark.Scalar(bookmark.Date), true
		}
		return varchar, true
	}
	if m := tsRE.FindStringSubmatch(v); m != nil {
		if _, err := time.Parse("2006-01-02", m[1]); err != nil || !validClock(m[2]) {
			return varchar, true
		}
		if m[5] != "" {
			return timestampTZ, true
		}
		return bookmark.Scalar(bookmark.Timestamp), true
	}
	return varchar, true
}

// leadingZero reports a number written with a leading zero before more
// digits ("007.5"), which is a code more often than a quantity.
func leadingZero(v string) bool {
	v = strings.TrimLeft(v, "+-")
	return len(v) > 1 && v[0] == '0' && v[1] >= '0' && v[1] <= '9'
}

// validClock checks HH:MM[:SS[.f]].
func validClock(s string) bool {
	hh, _ := strconv.Atoi(s[0:2])
	mm, _ := strconv.Atoi(s[3:5])
	if hh > 23 || mm > 59 {
		return false
	}
	if len(s) >= 8 {
		ss, _ := strconv.Atoi(s[6:8])
		return ss <= 60
	}
	return true
}
