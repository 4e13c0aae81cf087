package ddl

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
)

// trino is a schema, a Hive connector table over the table's location
// (external_location, format, partitioned_by; partition keys last, as the
// connector wants) and one system.register_partition call per registered
// partition. Trino's CSV format reads every column as VARCHAR, so a CSV
// table's columns are VARCHAR there.
func trino(t catalog.Table, parts []catalog.Partition) ([]string, error) {
	typeOf := trinoType
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

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// trinoType is Trino's type for t. Unsigned integers widen to the next
// signed type, times of day, intervals and UUIDs are VARCHAR (the Hive
// connector has none), timestamps are TIMESTAMP (the connector stores no
// zone).
func trinoType(t bookmark.Type) (string, error) {
	switch t.Kind {
	case bookmark.Boolean:
		return "BOOLEAN", nil
	case bookmark.TinyInt:
		return "TINYINT", nil
	case bookmark.SmallInt, bookmark.UTinyInt:
		return "SMALLINT", nil
	case bookmark.Integer, bookmark.USmallInt:
		return "INTEGER", nil
	case bookmark.BigInt, bookmark.UInteger:
		return "BIGINT", nil
	case bookmark.UBigInt:
		return "DECIMAL(20,0)", nil
	case bookmark.HugeInt, bookmark.UHugeInt:
		return "DECIMAL(38,0)", nil
	case bookmark.Float:
		return "REAL", nil
	case bookmark.Double:
		return "DOUBLE", nil
	case bookmark.Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case bookmark.Varchar, bookmark.UUID, bookmark.JSON, bookmark.Time, bookmark.TimeTZ, bookmark.Interval:
		return "VARCHAR", nil
	case bookmark.Blob, bookmark.Bit:
		return "VARBINARY", nil
	case bookmark.Date:
		return "DATE", nil
	case bookmark.Timestamp, bookmark.TimestampS, bookmark.TimestampMS, bookmark.TimestampNS, bookmark.TimestampTZ:
		return "TIMESTAMP", nil
	case bookmark.List:
		e, err := trinoType(*t.Elem)
		return "ARRAY(" + e + ")", err
	case bookmark.Map:
		k, err := trinoType(*t.Key)
		if err != nil {
			return "", err
		}
		v, err := trinoType(*t.Elem)
		return "MAP(" + k + ", " + v + ")", err
	case bookmark.Struct:
		fields := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := trinoType(f.Type)
			if err != nil {
				return "", err
			}
			fields[i] = quote(f.Name) + " " + ft
		}
		return "ROW(" + strings.Join(fields, ", ") + ")", nil
	}
	return "", fmt.Errorf("type %s has no Trino equivalent", t)
}
