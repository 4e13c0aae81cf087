package ddl

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/internal/sqltype"
)

// trino is a schema, a Hive connector table over the table's location
// (external_location, format, partitioned_by; partition keys last, as the
// connector wants) and one system.register_partition call per registered
// partition. Trino's CSV format reads every column as VARCHAR, so a CSV
// table's columns are VARCHAR there.
func trino(t catalog.Table, parts []catalog.Partition) ([]string, error) {
	typeOf := sqltype.Trino.Type
	var props []string
	switch t.Format {
	case "parquet":
		props = append(props, "format = 'PARQUET'")
	case "json":
		props = append(props, "format = 'JSON'")
	case "csv":
		typeOf = func(bookmark.Type) (string, error) { return "VARCHAR", nil }
		props = append(props, "format = 'CSV'", "csv_separator = "+sqlString(delimiter(t)))
		if header(t) {
			props = append(props, "skip_header_line_count = 1")
		}
	default:
		return nil, fmt.Errorf("table %s.%s: format %q has no Trino Hive format", t.Database, t.Name, t.Format)
	}
	cols, err := columnTypes(t, typeOf)
	if err != nil {
		return nil, err
	}
	props = append([]string{"external_location = " + sqlString(t.Location)}, props...)
	if len(t.PartitionKeys) > 0 {
		keys := make([]string, len(t.PartitionKeys))
		for i, k := range t.PartitionKeys {
			keys[i] = sqlString(k.Name)
		}
		props = append(props, "partitioned_by = ARRAY["+strings.Join(keys, ", ")+"]")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", trinoName(t))
	for i, c := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s %s%s\n", quote(c.Name), c.Type, sep)
	}
	fmt.Fprintf(&b, ")\nWITH (\n  %s\n)", strings.Join(props, ",\n  "))
	out := []string{"CREATE SCHEMA IF NOT EXISTS " + quote(t.Database), b.String()}
	for _, p := range parts {
		keys := make([]string, len(t.PartitionKeys))
		vals := make([]string, len(p.Values))
		for i, k := range t.PartitionKeys {
			keys[i] = sqlString(k.Name)
			vals[i] = sqlString(p.Values[i])
		}
		out = append(out, fmt.Sprintf("CALL system.register_partition(%s, %s, ARRAY[%s], ARRAY[%s], %s)",
			sqlString(t.Database), sqlString(t.Name), strings.Join(keys, ", "), strings.Join(vals, ", "), sqlString(p.Location)))
	}
	return out, nil
}

func trinoName(t catalog.Table) string { return quote(t.Database) + "." + quote(t.Name) }

func quote(s string) string { return sqltype.Trino.Quote(s) }
