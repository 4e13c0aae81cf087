package duckdb

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// The engine works in DuckDB's type spellings inside (they go into SQL as
// they are) and speaks bookmark.Type at its edges: a recorded schema is
// turned into DuckDB types when a source is opened (duckColumns) and the
// schema a source was read with is reported in canonical texts
// (modelColumns).

// duckType returns DuckDB's spelling of t.
func duckType(t bookmark.Type) string {
	switch t.Kind {
	case bookmark.List:
		return duckType(*t.Elem) + "[]"
	case bookmark.Map:
		return "MAP(" + duckType(*t.Key) + ", " + duckType(*t.Elem) + ")"
	case bookmark.Struct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = ident(f.Name) + " " + duckType(f.Type)
		}
		return "STRUCT(" + strings.Join(parts, ", ") + ")"
	}
	// Scalars: the canonical names are DuckDB's (TIMESTAMP WITH TIME
	// ZONE, DECIMAL(p,s), ...); Other keeps DuckDB's own text.
	return t.String()
}

// modelType returns the type model's reading of a DuckDB type name.
func modelType(duck string) (bookmark.Type, error) {
	return bookmark.ParseType(duck)
}

// duckColumns turns a recorded schema (canonical texts, or DuckDB
// spellings from older states) into DuckDB types.
func duckColumns(cols []bookmark.Column) ([]bookmark.Column, error) {
	out := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		t, err := bookmark.ParseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		out[i] = bookmark.Column{Name: c.Name, Type: duckType(t)}
	}
	return out, nil
}

// modelColumns turns DuckDB columns into canonical type texts; a type the
// parser cannot read (none DuckDB describes today) is kept as DuckDB says
// it.
func modelColumns(cols []bookmark.Column) []bookmark.Column {
	out := make([]bookmark.Column, len(cols))
	for i, c := range cols {
		out[i] = c
		if t, err := modelType(c.Type); err == nil {
			out[i].Type = t.String()
		}
	}
	return out
}
