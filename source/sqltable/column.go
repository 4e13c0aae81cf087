package sqltable

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// column is one column of what a source reads.
type column struct {
	Name string
	// DBType is the type as the database spells it (PostgreSQL
	// format_type, MySQL COLUMN_TYPE, SQLite declared type), for messages.
	DBType string
	// Type is the DuckDB type the engine reads the column as.
	Type string
	// out is the SQL expression that renders the column in the text form
	// DuckDB parses as Type (PostgreSQL only: bytea and arrays); empty
	// means the column itself.
	out string
	// format turns a value fetched through Go into DuckDB text (MySQL,
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

// keyKindOf derives the key kind from a DuckDB type.
func keyKindOf(duck string) keyKind {
	t := strings.ToUpper(duck)
	switch {
	case strings.HasSuffix(t, "[]"), t == "BLOB", t == "JSON", t == "BOOLEAN":
		return keyOther
	case strings.HasPrefix(t, "DECIMAL"):
		return keyDecimal
	case t == "FLOAT" || t == "DOUBLE":
		return keyFloat
	case strings.HasSuffix(t, "INT") || strings.HasSuffix(t, "INTEGER"):
		return keyInteger
	case t == "DATE":
		return keyDate
	case t == "TIMESTAMP":
		return keyTimestamp
	case t == "TIMESTAMPTZ":
		return keyTimestampTZ
	}
	return keyOther
}

// orderable reports whether a column can be a bookmark key: its values
// must compare the same in the database every run.
func (c column) orderable() bool {
	t := strings.ToUpper(c.Type)
	return !(strings.HasSuffix(t, "[]") || t == "BLOB" || t == "JSON" || t == "INTERVAL")
}

// schema converts columns to the engine's schema.
func schema(cols []column) []bookmark.Column {
	out := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		out[i] = bookmark.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// decimalType maps a precision and scale to DuckDB's DECIMAL, or reports
// that DuckDB cannot hold it (precision above 38, or none given).
func decimalType(p, s int) (string, bool) {
	if p < 1 || p > 38 || s < 0 || s > p {
		return "", false
	}
	return fmt.Sprintf("DECIMAL(%d,%d)", p, s), true
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
