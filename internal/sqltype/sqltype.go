// Package sqltype spells tidemark's engine-neutral column types
// (bookmark.Type) and quotes names in the SQL dialects tidemark writes:
// DuckDB, Spark SQL and Trino. One mapping per dialect serves the engine
// that reads with it and the catalog's DDL for it, so a catalog table
// declares exactly the types the engine reads and writes. It links no
// engine (the catalog's DDL uses it without DuckDB's cgo build).
package sqltype

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Dialect is one SQL dialect's spelling of types and names.
type Dialect struct {
	// Name is the dialect's name in messages: "DuckDB", "Spark SQL".
	Name string
	// scalars are the scalar kinds' names; nil: the canonical names
	// (bookmark.Type.String), which are DuckDB's.
	scalars map[bookmark.Kind]string
	// list, mapOf, field and fields spell ARRAY, MAP, a STRUCT's field
	// and a STRUCT.
	list   func(elem string) string
	mapOf  func(key, value string) string
	field  func(name, typ string) string
	fields func(fields []string) string
	// quote quotes an identifier.
	quote func(name string) string
}

// Type spells t in the dialect. A type the dialect has no equivalent for
// (an Other type, in Spark SQL and Trino) is an error.
func (d Dialect) Type(t bookmark.Type) (string, error) {
	switch t.Kind {
	case bookmark.List:
		e, err := d.Type(*t.Elem)
		return d.list(e), err
	case bookmark.Map:
		k, err := d.Type(*t.Key)
		if err != nil {
			return "", err
		}
		v, err := d.Type(*t.Elem)
		return d.mapOf(k, v), err
	case bookmark.Struct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := d.Type(f.Type)
			if err != nil {
				return "", err
			}
			parts[i] = d.field(d.quote(f.Name), ft)
		}
		return d.fields(parts), nil
	case bookmark.Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	}
	if d.scalars == nil {
		// The canonical names are DuckDB's; Other keeps DuckDB's own text.
		return t.String(), nil
	}
	if s, ok := d.scalars[t.Kind]; ok {
		return s, nil
	}
	return "", fmt.Errorf("type %s has no %s equivalent", t, d.Name)
}

// Quote quotes name as an identifier of the dialect.
func (d Dialect) Quote(name string) string { return d.quote(name) }

// Literal quotes s as a standard SQL string literal: 's', an inner quote
// doubled (DuckDB's, Spark's with escapedStringLiterals off, and Trino's).
func Literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func doubleQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func backtick(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// widened are the scalar names Spark SQL and Trino share; neither has
// unsigned integers or HUGEINT, so those go to the next wider signed type
// or a DECIMAL.
var widened = map[bookmark.Kind]string{
	bookmark.Boolean: "BOOLEAN", bookmark.TinyInt: "TINYINT", bookmark.SmallInt: "SMALLINT",
	bookmark.UTinyInt: "SMALLINT", bookmark.BigInt: "BIGINT", bookmark.UInteger: "BIGINT",
	bookmark.UBigInt: "DECIMAL(20,0)", bookmark.HugeInt: "DECIMAL(38,0)", bookmark.UHugeInt: "DECIMAL(38,0)",
	bookmark.Double: "DOUBLE", bookmark.Date: "DATE",
}

// same gives kinds one name.
func same(name string, kinds ...bookmark.Kind) map[bookmark.Kind]string {
	m := map[bookmark.Kind]string{}
	for _, k := range kinds {
		m[k] = name
	}
	return m
}

func merge(ms ...map[bookmark.Kind]string) map[bookmark.Kind]string {
	out := map[bookmark.Kind]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var (
	// DuckDB is DuckDB's dialect: the canonical names, T[], MAP(K, V),
	// STRUCT("a" T), "quoted" names.
	DuckDB = Dialect{Name: "DuckDB",
		list:   func(e string) string { return e + "[]" },
		mapOf:  func(k, v string) string { return "MAP(" + k + ", " + v + ")" },
		field:  func(n, t string) string { return n + " " + t },
		fields: func(fs []string) string { return "STRUCT(" + strings.Join(fs, ", ") + ")" },
		quote:  doubleQuote,
	}

	// Spark is Spark SQL's dialect. Types Spark has no equivalent of map
	// to the nearest type that holds every value: unsigned integers to the
	// next wider signed type or a DECIMAL; TIME, TIMETZ, INTERVAL, UUID
	// and JSON to STRING; BIT to BINARY (DuckDB writes it to Parquet as
	// plain bytes, which Spark reads as BINARY); every timestamp precision
	// to microseconds (TIMESTAMP_NTZ, and TIMESTAMP for a timestamp with
	// time zone).
	Spark = Dialect{Name: "Spark SQL",
		scalars: merge(widened,
			same("INT", bookmark.Integer, bookmark.USmallInt),
			same("FLOAT", bookmark.Float),
			same("STRING", bookmark.Varchar, bookmark.Time, bookmark.TimeTZ, bookmark.Interval, bookmark.UUID, bookmark.JSON),
			same("BINARY", bookmark.Blob, bookmark.Bit),
			same("TIMESTAMP_NTZ", bookmark.Timestamp, bookmark.TimestampS, bookmark.TimestampMS, bookmark.TimestampNS),
			same("TIMESTAMP", bookmark.TimestampTZ)),
		list:   func(e string) string { return "ARRAY<" + e + ">" },
		mapOf:  func(k, v string) string { return "MAP<" + k + ", " + v + ">" },
		field:  func(n, t string) string { return n + ": " + t },
		fields: func(fs []string) string { return "STRUCT<" + strings.Join(fs, ", ") + ">" },
		quote:  backtick,
	}

	// Trino is Trino's dialect (the Hive connector's types). Unsigned
	// integers widen as for Spark, times of day, intervals and UUIDs are
	// VARCHAR (the connector has none), timestamps are TIMESTAMP (it
	// stores no zone).
	Trino = Dialect{Name: "Trino",
		scalars: merge(widened,
			same("INTEGER", bookmark.Integer, bookmark.USmallInt),
			same("REAL", bookmark.Float),
			same("VARCHAR", bookmark.Varchar, bookmark.UUID, bookmark.JSON, bookmark.Time, bookmark.TimeTZ, bookmark.Interval),
			same("VARBINARY", bookmark.Blob, bookmark.Bit),
			same("TIMESTAMP", bookmark.Timestamp, bookmark.TimestampS, bookmark.TimestampMS, bookmark.TimestampNS, bookmark.TimestampTZ)),
		list:   func(e string) string { return "ARRAY(" + e + ")" },
		mapOf:  func(k, v string) string { return "MAP(" + k + ", " + v + ")" },
		field:  func(n, t string) string { return n + " " + t },
		fields: func(fs []string) string { return "ROW(" + strings.Join(fs, ", ") + ")" },
		quote:  doubleQuote,
	}
)
