package ddl

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
)

// duckDB is a schema and a view over the table's files: read_parquet,
// read_csv or read_json over one glob per partition level (key=*/), with
// hive_partitioning, so that files DuckDB's readers would otherwise take
// (a sink's _tidemark/ folder, a _SUCCESS marker) are not part of it.
// Columns are typed as the engine reads them (engine/duckdb's mapping).
func duckDB(t catalog.Table) ([]string, error) {
	cols, err := columnTypes(t, func(bt bookmark.Type) (string, error) { return duckdb.TypeSQL(bt), nil })
	if err != nil {
		return nil, err
	}
	data, hive := cols[:len(t.Columns)], cols[len(t.Columns):]
	glob := strings.TrimSuffix(t.Location, "/")
	for _, k := range t.PartitionKeys {
		glob += "/" + k.Name + "=*"
	}
	glob += "/" + dataFiles
	var args []string
	switch t.Format {
	case "parquet":
		args = append(args, "union_by_name = true")
	case "csv":
		args = append(args, "columns = "+structArg(data), "header = "+fmt.Sprint(header(t)),
			"delim = "+duckdb.Literal(delimiter(t)), "auto_detect = false")
		for _, o := range []struct {
			duck  string
			names []string
		}{
			{"quote", []string{"quote"}}, {"escape", []string{"escape"}}, {"nullstr", []string{"nullstr"}},
			{"dateformat", []string{"dateformat", "date_format"}}, {"timestampformat", []string{"timestampformat", "timestamp_format"}},
		} {
			if v, ok := option(t, o.names...); ok {
				args = append(args, o.duck+" = "+duckdb.Literal(v))
			}
		}
	case "json":
		args = append(args, "format = 'newline_delimited'", "columns = "+structArg(data), "auto_detect = false")
	default:
		return nil, fmt.Errorf("table %s.%s: format %q has no DuckDB reader", t.Database, t.Name, t.Format)
	}
	if len(hive) > 0 {
		args = append(args, "hive_partitioning = true", "hive_types = "+structArg(hive))
	} else {
		args = append(args, "hive_partitioning = false")
	}
	// Parquet files carry their own types: each column is cast to the
	// catalog's (CSV and JSON are read with them, and so are partition
	// keys, by hive_types).
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = duckdb.Ident(c.Name)
		if t.Format == "parquet" && i < len(data) {
			names[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", names[i], c.Type, names[i])
		}
	}
	view := fmt.Sprintf("CREATE OR REPLACE VIEW %s.%s AS\nSELECT %s\nFROM read_%s(%s,\n  %s)",
		duckdb.Ident(t.Database), duckdb.Ident(t.Name), strings.Join(names, ", "),
		t.Format, duckdb.Literal(glob), strings.Join(args, ",\n  "))
	return []string{"CREATE SCHEMA IF NOT EXISTS " + duckdb.Ident(t.Database), view}, nil
}

// dataFiles matches a partition's data files, leaving out names that
// start with _ or . (markers, staging folders), as tidemark's listing does.
const dataFiles = "[!_.]*"

// structArg renders columns as a DuckDB struct literal {'name': 'TYPE'}.
func structArg(cols []catalog.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = duckdb.Literal(c.Name) + ": " + duckdb.Literal(c.Type)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
