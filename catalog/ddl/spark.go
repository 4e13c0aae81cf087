package ddl

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
)

// spark is a database, an external table USING the table's format over
// its location (s3:// as s3a://, Hadoop's S3 file system), and one ADD
// PARTITION per registered partition.
func spark(t catalog.Table, parts []catalog.Partition) ([]string, error) {
	cols, err := columnTypes(t, sparkType)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n", sparkName(t))
	for i, c := range cols {
		sep := ","
		if i == len(cols)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "  %s %s%s\n", backtick(c.Name), c.Type, sep)
	}
	b.WriteString(")\nUSING " + t.Format)
	switch t.Format {
	case "csv":
		fmt.Fprintf(&b, "\nOPTIONS (header %s, sep %s)", sqlString(fmt.Sprint(header(t))), sqlString(delimiter(t)))
	case "json", "parquet":
	default:
		return nil, fmt.Errorf("table %s.%s: format %q has no Spark data source", t.Database, t.Name, t.Format)
	}
	if len(t.PartitionKeys) > 0 {
		keys := make([]string, len(t.PartitionKeys))
		for i, k := range t.PartitionKeys {
			keys[i] = backtick(k.Name)
		}
		fmt.Fprintf(&b, "\nPARTITIONED BY (%s)", strings.Join(keys, ", "))
	}
	fmt.Fprintf(&b, "\nLOCATION %s", sqlString(sparkLocation(t.Location)))
	out := []string{"CREATE DATABASE IF NOT EXISTS " + backtick(t.Database), b.String()}
	for _, p := range parts {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD IF NOT EXISTS PARTITION (%s) LOCATION %s",
			sparkName(t), partitionSpec(t, p, backtick, " = "), sqlString(sparkLocation(p.Location))))
	}
	return out, nil
}

func sparkName(t catalog.Table) string { return backtick(t.Database) + "." + backtick(t.Name) }

func backtick(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// sparkLocation is a location as Spark's Hadoop file systems name it.
func sparkLocation(loc string) string {
	if rest, ok := strings.CutPrefix(loc, "s3://"); ok {
		return "s3a://" + rest
	}
	return loc
}

// sparkType is Spark SQL's type for t. Unsigned integers widen to the
// next signed type (UBIGINT to DECIMAL(20,0)), times of day and intervals
// and JSON are strings.
func sparkType(t bookmark.Type) (string, error) {
	switch t.Kind {
	case bookmark.Boolean:
		return "BOOLEAN", nil
	case bookmark.TinyInt:
		return "TINYINT", nil
	case bookmark.SmallInt, bookmark.UTinyInt:
		return "SMALLINT", nil
	case bookmark.Integer, bookmark.USmallInt:
		return "INT", nil
	case bookmark.BigInt, bookmark.UInteger:
		return "BIGINT", nil
	case bookmark.UBigInt:
		return "DECIMAL(20,0)", nil
	case bookmark.HugeInt, bookmark.UHugeInt:
		return "DECIMAL(38,0)", nil
	case bookmark.Float:
		return "FLOAT", nil
	case bookmark.Double:
		return "DOUBLE", nil
	case bookmark.Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case bookmark.Varchar, bookmark.UUID, bookmark.JSON, bookmark.Time, bookmark.TimeTZ, bookmark.Interval:
		return "STRING", nil
	case bookmark.Blob, bookmark.Bit:
		return "BINARY", nil
	case bookmark.Date:
		return "DATE", nil
	case bookmark.Timestamp, bookmark.TimestampS, bookmark.TimestampMS, bookmark.TimestampNS:
		return "TIMESTAMP_NTZ", nil
	case bookmark.TimestampTZ:
		return "TIMESTAMP", nil
	case bookmark.List:
		e, err := sparkType(*t.Elem)
		return "ARRAY<" + e + ">", err
	case bookmark.Map:
		k, err := sparkType(*t.Key)
		if err != nil {
			return "", err
		}
		v, err := sparkType(*t.Elem)
		return "MAP<" + k + ", " + v + ">", err
	case bookmark.Struct:
		fields := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := sparkType(f.Type)
			if err != nil {
				return "", err
			}
			fields[i] = backtick(f.Name) + ": " + ft
		}
		return "STRUCT<" + strings.Join(fields, ", ") + ">", nil
	}
	return "", fmt.Errorf("type %s has no Spark SQL equivalent", t)
}
