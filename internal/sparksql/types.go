// Package sparksql spells tidemark's engine-neutral column types in Spark
// SQL. One mapping serves the Spark engine's reads (the schema it gives
// Spark) and the catalog's Spark DDL (the tables it registers), so a table
// declares exactly the types the Spark engine reads and writes.
package sparksql

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Type spells t in Spark's DDL. Types Spark has no equivalent of map to
// the nearest type that holds every value: unsigned integers to the next
// wider signed type or a DECIMAL; TIME, TIMETZ, INTERVAL, UUID and JSON to
// STRING; BIT to BINARY (DuckDB writes it to Parquet as plain bytes, which
// Spark reads as BINARY); every timestamp precision to microseconds
// (TIMESTAMP_NTZ, and TIMESTAMP for a timestamp with time zone).
func Type(t bookmark.Type) (string, error) {
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
	case bookmark.Varchar, bookmark.Time, bookmark.TimeTZ, bookmark.Interval, bookmark.UUID, bookmark.JSON:
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
		e, err := Type(*t.Elem)
		return "ARRAY<" + e + ">", err
	case bookmark.Map:
		k, err := Type(*t.Key)
		if err != nil {
			return "", err
		}
		v, err := Type(*t.Elem)
		return "MAP<" + k + ", " + v + ">", err
	case bookmark.Struct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := Type(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = Quote(f.Name) + ": " + ft
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">", nil
	}
	return "", fmt.Errorf("type %s has no Spark SQL equivalent", t)
}

// Quote is name as a Spark SQL identifier: in backticks, a backtick doubled.
func Quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
