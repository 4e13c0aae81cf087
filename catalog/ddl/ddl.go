// Package ddl writes the statements that make a catalog table queryable in
// another engine: a DuckDB view over the table's files, a Spark table, a
// Trino (Hive connector) table, each with the table's columns mapped from
// the engine-neutral types (bookmark.Type) to the dialect's, and its
// registered partitions.
package ddl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
)

// Dialects are the engines Statements writes for.
var Dialects = []string{"duckdb", "spark", "trino"}

// Statements returns the statements, each without its final semicolon,
// that make table t (with its partitions parts, in order) queryable in
// dialect. A column type the dialect has no equivalent for is an error
// naming the column.
func Statements(dialect string, t catalog.Table, parts []catalog.Partition) ([]string, error) {
	switch dialect {
	case "duckdb":
		return duckDB(t)
	case "spark":
		return spark(t, parts)
	case "trino":
		return trino(t, parts)
	}
	return nil, fmt.Errorf("dialect %q: want one of %s", dialect, strings.Join(Dialects, ", "))
}

// columnTypes maps every column of t (data columns, then partition keys)
// with typeOf, naming the column that does not map.
func columnTypes(t catalog.Table, typeOf func(bookmark.Type) (string, error)) ([]catalog.Column, error) {
	var out []catalog.Column
	for _, c := range slices.Concat(t.Columns, t.PartitionKeys) {
		bt, err := bookmark.ParseType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", c.Name, t.Database, t.Name, err)
		}
		s, err := typeOf(bt)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", c.Name, t.Database, t.Name, err)
		}
		out = append(out, catalog.Column{Name: c.Name, Type: s})
	}
	return out, nil
}

// header reports whether a CSV table's files start with a header row
// (the reader's default: yes).
func header(t catalog.Table) bool {
	v, ok := t.Option("header")
	return !ok || strings.EqualFold(v, "true")
}

// delimiter is a CSV table's field delimiter (default ",").
func delimiter(t catalog.Table) string {
	if v, ok := t.Option("delim", "delimiter", "sep"); ok {
		return v
	}
	return ","
}

// sqlString quotes s as a standard SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// partitionValues describes p's values for messages.
func partitionSpec(t catalog.Table, p catalog.Partition, quote func(string) string, sep string) string {
	parts := make([]string, len(p.Values))
	for i, v := range p.Values {
		parts[i] = quote(t.PartitionKeys[i].Name) + sep + sqlString(v)
	}
	return strings.Join(parts, ", ")
}
