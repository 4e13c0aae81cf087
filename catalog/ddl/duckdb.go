package ddl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/internal/sqltype"
)

// duckDB is a schema and a view over the table's files: read_parquet,
// read_csv or read_json over one glob per partition level (key=*/), with
// hive_partitioning, so that files DuckDB's readers would otherwise take
// (a sink's _tidemark/ folder, a _SUCCESS marker) are not part of it.
// Columns are typed as the engine reads them (sqltype.DuckDB, the
// engine's mapping);
// Parquet files and CSV files with a header are matched by column name.
func duckDB(t catalog.Table) ([]string, error) {
	cols, err := columnTypes(t, sqltype.DuckDB.Type)
	if err != nil {
		return nil, err
	}
	data, hive := cols[:len(t.Columns)], cols[len(t.Columns):]
	glob := strings.TrimSuffix(t.Location, "/")
	for _, k := range t.PartitionKeys {
		glob += "/" + k.Name + "=*"
	}
	glob += "/" + dataFiles
	// A CSV file with a header is read by its names (union_by_name), as
	// text, and cast to the catalog's types: read by position, a file whose
	// header orders the columns otherwise put its values under the wrong
	// names, and DuckDB's typed reader fails on a column some file lacks.
	byName := t.Format == "csv" && header(t)
	var args []string
	switch t.Format {
	case "parquet":
		args = append(args, "union_by_name = true")
	case "csv":
		args = append(args, "header = "+fmt.Sprint(header(t)), "delim = "+sqltype.Literal(delimiter(t)))
		if byName {
			args = append(args, "union_by_name = true", "all_varchar = true")
		} else {
			args = append(args, "columns = "+structArg(data), "auto_detect = false")
		}
		for _, o := range []struct {
			duck  string
			names []string
		}{
			{"quote", []string{"quote"}}, {"escape", []string{"escape"}}, {"nullstr", []string{"nullstr"}},
			{"dateformat", []string{"dateformat", "date_format"}}, {"timestampformat", []string{"timestampformat", "timestamp_format"}},
		} {
			if v, ok := t.Option(o.names...); ok && !(byName && strings.HasSuffix(o.duck, "format")) {
				args = append(args, o.duck+" = "+sqltype.Literal(v))
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
	// Parquet files carry their own types and CSV files read by name are
	// text: each column is cast to the catalog's (typed CSV and JSON are
	// read with them, and so are partition keys, by hive_types).
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = sqltype.DuckDB.Quote(c.Name)
		switch {
		case i >= len(data):
		case t.Format == "parquet":
			names[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", names[i], c.Type, names[i])
		case byName:
			names[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", textAs(t, c, names[i]), c.Type, names[i])
		}
	}
	from := fmt.Sprintf("read_%s(%s,\n  %s)", t.Format, sqltype.Literal(glob), strings.Join(args, ",\n  "))
	switch {
	case t.Format == "parquet":
		from = anchored(cols, from)
	case byName:
		text := slices.Clone(cols)
		for i := range data {
			text[i].Type = "VARCHAR"
		}
		from = anchored(text, from)
	}
	view := fmt.Sprintf("CREATE OR REPLACE VIEW %s.%s AS\nSELECT %s\nFROM %s",
		sqltype.DuckDB.Quote(t.Database), sqltype.DuckDB.Quote(t.Name), strings.Join(names, ", "), from)
	return []string{"CREATE SCHEMA IF NOT EXISTS " + sqltype.DuckDB.Quote(t.Database), view}, nil
}

// anchored puts an empty row set with every column of the table in front
// of a read by name (UNION ALL BY NAME), so that a column no file has (one
// added by a later version whose files a purge deleted, or whose files are
// all gone) reads as NULL instead of failing the view, as Spark and Trino
// read it.
func anchored(cols []catalog.Column, read string) string {
	nulls := make([]string, len(cols))
	for i, c := range cols {
		nulls[i] = fmt.Sprintf("CAST(NULL AS %s) AS %s", c.Type, sqltype.DuckDB.Quote(c.Name))
	}
	return fmt.Sprintf("(SELECT %s WHERE false\n  UNION ALL BY NAME\n  SELECT * FROM %s)", strings.Join(nulls, ", "), read)
}

// textAs is the expression that reads CSV text column c (named ident) as
// its type: by the table's date or timestamp format when it has one (the
// typed reader's dateformat and timestampformat), else by the cast.
func textAs(t catalog.Table, c catalog.Column, ident string) string {
	var format string
	var ok bool
	switch {
	case c.Type == "DATE":
		format, ok = t.Option("dateformat", "date_format")
	case strings.HasPrefix(c.Type, "TIMESTAMP"):
		format, ok = t.Option("timestampformat", "timestamp_format")
	}
	if !ok {
		return ident
	}
	return fmt.Sprintf("strptime(%s, %s)", ident, sqltype.Literal(format))
}

// dataFiles matches a partition's data files, leaving out names that
// start with _ or . (markers, staging folders), as tidemark's listing does.
const dataFiles = "[!_.]*"

// structArg renders columns as a DuckDB struct literal {'name': 'TYPE'}.
func structArg(cols []catalog.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = sqltype.Literal(c.Name) + ": " + sqltype.Literal(c.Type)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
