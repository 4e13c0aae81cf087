package duckdb

import (
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqltype"
)

// The engine works in DuckDB's type spellings inside (they go into SQL as
// they are) and speaks bookmark.Type at its edges: a recorded schema is
// turned into DuckDB types when a source is opened (duckColumns) and the
// schema a source was read with is reported in canonical texts
// (modelColumns).

// duckType returns DuckDB's spelling of t: sqltype.DuckDB, the mapping the
// catalog's DuckDB DDL uses too, so that a catalog table reads the same in
// tidemark and in DuckDB. DuckDB spells every type (an Other type is its
// own text).
func duckType(t bookmark.Type) string {
	s, _ := sqltype.DuckDB.Type(t)
	return s
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
