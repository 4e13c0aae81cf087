package sqltable

import (
	"github.com/tidemark-etl/tidemark/bookmark"
)

// column is one column of what a source reads.
type column struct {
	Name string
	// DBType is the type as the database spells it (PostgreSQL
	// format_type, MySQL COLUMN_TYPE, SQLite declared type), for messages.
	DBType string
	// Type is the type the engine reads the column as.
	Type bookmark.Type
	// out is the SQL expression that renders the column in the text form
	// the engine parses as Type (PostgreSQL only: bytea and arrays);
	// empty means the column itself.
	out string
	// format turns a value fetched through Go into the engine's text (MySQL,
	// SQLite); nil means the fetched text as it is.
	format formatter
	// key is what lookback arithmetic may do with the column's values.
	key keyKind
	// notNull is set for table columns declared NOT NULL: no need to
	// count NULL keys there.
	notNull bool
	// cast is the type a key value given as text is cast to in
	// comparisons (PostgreSQL and MySQL); empty means no cast.
	cast string
}

// keyKind says how a key column's values can move by a lookback.
type keyKind int

const (
	keyOther       keyKind = iota // text, uuid, ...: no lookback
	keyInteger                    // a key distance
	keyDecimal                    // a key distance, exact
	keyFloat                      // a key distance
	keyDate                       // a duration, in whole days
	keyTimestamp                  // a duration
	keyTimestampTZ                // a duration
)

// keyKindOf derives the key kind from a column's type. A dialect
// overrides it where the database type says more (a decimal read as text
// still moves by key distances).
func keyKindOf(t bookmark.Type) keyKind {
	switch {
	case t.Integral():
		return keyInteger
	case t.Kind == bookmark.Decimal:
		return keyDecimal
	case t.Kind == bookmark.Float || t.Kind == bookmark.Double:
		return keyFloat
	case t.Kind == bookmark.Date:
		return keyDate
	case t.Kind == bookmark.Timestamp:
		return keyTimestamp
	case t.Kind == bookmark.TimestampTZ:
		return keyTimestampTZ
	}
	return keyOther
}

// orderable reports whether a column can be a bookmark key: its values
// must compare the same in the database every run.
func (c column) orderable() bool {
	switch c.Type.Kind {
	case bookmark.List, bookmark.Blob, bookmark.JSON, bookmark.Interval:
		return false
	}
	return true
}

// schema converts columns to the recorded schema: canonical type texts.
func schema(cols []column) []bookmark.Column {
	out := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		out[i] = bookmark.Column{Name: c.Name, Type: c.Type.String()}
	}
	return out
}

// varchar is the type of columns read as text.
var varchar = bookmark.Scalar(bookmark.Varchar)

// decimalType returns DECIMAL(p,s), or reports that the type model (and
// the engine) cannot hold it: precision above 38, or none given.
func decimalType(p, s int) (bookmark.Type, bool) {
	if p < 1 || p > 38 || s < 0 || s > p {
		return bookmark.Type{}, false
	}
	return bookmark.DecimalOf(p, s), true
}

// findColumn returns the index of name in cols (exact match).
func findColumn(cols []column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	return -1
}
