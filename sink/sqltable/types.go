package sqltable

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// target describes how one output column travels: its type in a table
// tidemark creates, and the DuckDB expression that renders a value as the
// text the database's bulk load accepts.
type target struct {
	col  bookmark.Column
	ddl  string // column type for CREATE TABLE
	load string // DuckDB expression over the Parquet column
	// unhex marks a column loaded as hex text and decoded by the server
	// (MySQL LOAD DATA ... SET col = UNHEX(@v)).
	unhex bool
}

// pgScalars are PostgreSQL's column types for the scalar kinds it has a
// counterpart for.
var pgScalars = map[bookmark.Kind]string{
	bookmark.Boolean: "boolean", bookmark.TinyInt: "smallint", bookmark.SmallInt: "smallint",
	bookmark.Integer: "integer", bookmark.BigInt: "bigint", bookmark.HugeInt: "numeric(39,0)",
	bookmark.UTinyInt: "smallint", bookmark.USmallInt: "integer", bookmark.UInteger: "bigint",
	bookmark.UBigInt: "numeric(20,0)", bookmark.Float: "real", bookmark.Double: "double precision",
	bookmark.Varchar: "text", bookmark.Date: "date", bookmark.Timestamp: "timestamp(6)",
	bookmark.TimestampTZ: "timestamptz", bookmark.Time: "time", bookmark.Interval: "interval",
	bookmark.Blob: "bytea", bookmark.UUID: "uuid", bookmark.JSON: "jsonb", bookmark.TimestampS: "timestamp(0)",
	bookmark.TimestampMS: "timestamp(3)", bookmark.TimestampNS: "timestamp(6)",
}

// mysqlScalars are MySQL/MariaDB's column types for the scalar kinds.
// TIMESTAMP WITH TIME ZONE is stored as DATETIME(6) in UTC (MySQL's
// TIMESTAMP ends in 2038).
var mysqlScalars = map[bookmark.Kind]string{
	bookmark.Boolean: "boolean", bookmark.TinyInt: "tinyint", bookmark.SmallInt: "smallint",
	bookmark.Integer: "int", bookmark.BigInt: "bigint", bookmark.HugeInt: "decimal(39,0)",
	bookmark.UTinyInt: "tinyint unsigned", bookmark.USmallInt: "smallint unsigned",
	bookmark.UInteger: "int unsigned", bookmark.UBigInt: "bigint unsigned", bookmark.Float: "float",
	bookmark.Double: "double", bookmark.Varchar: "longtext", bookmark.Date: "date",
	bookmark.Timestamp: "datetime(6)", bookmark.TimestampTZ: "datetime(6)", bookmark.Time: "time(6)",
	bookmark.Interval: "varchar(100)", bookmark.Blob: "longblob", bookmark.UUID: "char(36)",
	bookmark.JSON: "json", bookmark.TimestampS: "datetime", bookmark.TimestampMS: "datetime(3)",
	bookmark.TimestampNS: "datetime(6)",
}

// pgColumnType returns the PostgreSQL column type for t: a scalar, a
// decimal, or a one-dimensional array of either (not of bytea). ok is
// false when PostgreSQL has no counterpart.
func pgColumnType(t bookmark.Type) (ddl string, ok bool) {
	switch t.Kind {
	case bookmark.List:
		if t.Elem.Nested() || t.Elem.Kind == bookmark.Blob {
			return "", false
		}
		if elem, ok := pgColumnType(*t.Elem); ok {
			return elem + "[]", true
		}
		return "", false
	case bookmark.Decimal:
		return fmt.Sprintf("numeric(%d,%d)", t.Precision, t.Scale), true
	}
	ddl, ok = pgScalars[t.Kind]
	return ddl, ok
}

// mysqlColumnType returns the MySQL/MariaDB column type for t: lists are
// stored as JSON. ok is false when MySQL has no counterpart (structs,
// maps).
func mysqlColumnType(t bookmark.Type) (ddl string, ok bool) {
	switch t.Kind {
	case bookmark.List:
		return "json", true
	case bookmark.Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale), true
	}
	ddl, ok = mysqlScalars[t.Kind]
	return ddl, ok
}

// targets maps the output schema for kind k. keys are the merge keys,
// which MySQL can only index as bounded strings.
func targets(k sqldb.Kind, schema []bookmark.Column, keys []string) ([]target, error) {
	out := make([]target, len(schema))
	for i, c := range schema {
		t, err := mapColumn(k, c, contains(keys, c.Name))
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		out[i] = t
	}
	return out, nil
}

// mapColumn maps one output column; its type is a canonical text or
// DuckDB's spelling (the staged Parquet's schema).
func mapColumn(k sqldb.Kind, c bookmark.Column, key bool) (target, error) {
	col := `"` + strings.ReplaceAll(c.Name, `"`, `""`) + `"` // DuckDB identifier
	t := target{col: c, load: col}
	typ, err := bookmark.ParseType(c.Type)
	if err != nil {
		return t, err
	}
	ddl, ok := pgColumnType(typ)
	if k == sqldb.MySQL {
		ddl, ok = mysqlColumnType(typ)
	}
	switch {
	case !ok && typ.Kind == bookmark.List && k == sqldb.Postgres:
		return t, fmt.Errorf("type %s cannot be written to a PostgreSQL array", c.Type)
	case !ok:
		return t, fmt.Errorf("type %s has no counterpart in %s", c.Type, k)
	}
	t.ddl = ddl
	switch {
	case typ.Kind == bookmark.List && k == sqldb.MySQL:
		t.load = "CAST(to_json(" + col + ") AS VARCHAR)"
	case typ.Kind == bookmark.List:
		// PostgreSQL's array text: {"a","b",NULL}, backslash escapes.
		t.load = `'{' || array_to_string(list_transform(` + col + `, x -> CASE WHEN x IS NULL THEN 'NULL' ELSE '"' || ` +
			`replace(replace(CAST(x AS VARCHAR), '\', '\\'), '"', '\"') || '"' END), ',') || '}'`
	case typ.Kind == bookmark.Blob && k == sqldb.Postgres:
		t.load = `'\x' || hex(` + col + `)`
	case typ.Kind == bookmark.Blob:
		t.load, t.unhex = "hex("+col+")", true
	case k == sqldb.MySQL && typ.Kind == bookmark.Boolean:
		t.load = "CAST(" + col + " AS INTEGER)"
	case k == sqldb.MySQL && typ.Kind == bookmark.TimestampTZ:
		t.load = "CAST(CAST(" + col + " AS TIMESTAMP) AS VARCHAR)" // UTC: the conversion session is in UTC
	case k == sqldb.MySQL && typ.Kind == bookmark.Varchar && key:
		t.ddl = "varchar(255)" // an index needs a bounded length
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
