package sqltable

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source/sqltable/sqldb"
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

var duckDecimal = regexp.MustCompile(`^DECIMAL\((\d+),\s*(\d+)\)$`)

// pgTypes maps DuckDB scalar types to PostgreSQL.
var pgTypes = map[string]string{
	"BOOLEAN": "boolean", "TINYINT": "smallint", "SMALLINT": "smallint", "INTEGER": "integer",
	"BIGINT": "bigint", "HUGEINT": "numeric(39,0)", "UTINYINT": "smallint", "USMALLINT": "integer",
	"UINTEGER": "bigint", "UBIGINT": "numeric(20,0)", "FLOAT": "real", "DOUBLE": "double precision",
	"VARCHAR": "text", "DATE": "date", "TIMESTAMP": "timestamp(6)", "TIMESTAMP WITH TIME ZONE": "timestamptz",
	"TIMESTAMPTZ": "timestamptz", "TIME": "time", "INTERVAL": "interval", "BLOB": "bytea", "UUID": "uuid",
	"JSON": "jsonb", "TIMESTAMP_S": "timestamp(0)", "TIMESTAMP_MS": "timestamp(3)", "TIMESTAMP_NS": "timestamp(6)",
}

// mysqlTypes maps DuckDB scalar types to MySQL/MariaDB. TIMESTAMPTZ is
// stored as DATETIME(6) in UTC (MySQL's TIMESTAMP ends in 2038).
var mysqlTypes = map[string]string{
	"BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INTEGER": "int",
	"BIGINT": "bigint", "HUGEINT": "decimal(39,0)", "UTINYINT": "tinyint unsigned", "USMALLINT": "smallint unsigned",
	"UINTEGER": "int unsigned", "UBIGINT": "bigint unsigned", "FLOAT": "float", "DOUBLE": "double",
	"VARCHAR": "longtext", "DATE": "date", "TIMESTAMP": "datetime(6)", "TIMESTAMP WITH TIME ZONE": "datetime(6)",
	"TIMESTAMPTZ": "datetime(6)", "TIME": "time(6)", "INTERVAL": "varchar(100)", "BLOB": "longblob",
	"UUID": "char(36)", "JSON": "json", "TIMESTAMP_S": "datetime", "TIMESTAMP_MS": "datetime(3)", "TIMESTAMP_NS": "datetime(6)",
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

func mapColumn(k sqldb.Kind, c bookmark.Column, key bool) (target, error) {
	typ := strings.ToUpper(strings.TrimSpace(c.Type))
	col := `"` + strings.ReplaceAll(c.Name, `"`, `""`) + `"` // DuckDB identifier
	t := target{col: c, load: col}
	if strings.HasSuffix(typ, "[]") {
		elem := strings.TrimSuffix(typ, "[]")
		if k == sqldb.MySQL {
			t.ddl, t.load = "json", "CAST(to_json("+col+") AS VARCHAR)"
			return t, nil
		}
		e, ok := pgTypes[elem]
		if m := duckDecimal.FindStringSubmatch(elem); m != nil {
			e, ok = "numeric("+m[1]+","+m[2]+")", true
		}
		if !ok || strings.HasSuffix(elem, "[]") || elem == "BLOB" {
			return t, fmt.Errorf("type %s cannot be written to a PostgreSQL array", c.Type)
		}
		t.ddl = e + "[]"
		// PostgreSQL's array text: {"a","b",NULL}, backslash escapes.
		t.load = `'{' || array_to_string(list_transform(` + col + `, x -> CASE WHEN x IS NULL THEN 'NULL' ELSE '"' || ` +
			`replace(replace(CAST(x AS VARCHAR), '\', '\\'), '"', '\"') || '"' END), ',') || '}'`
		return t, nil
	}
	types := pgTypes
	if k == sqldb.MySQL {
		types = mysqlTypes
	}
	ddl, ok := types[typ]
	if m := duckDecimal.FindStringSubmatch(typ); m != nil {
		ddl, ok = "numeric("+m[1]+","+m[2]+")", true
		if k == sqldb.MySQL {
			ddl = "decimal(" + m[1] + "," + m[2] + ")"
		}
	}
	if !ok {
		return t, fmt.Errorf("type %s has no counterpart in %s", c.Type, k)
	}
	t.ddl = ddl
	switch {
	case typ == "BLOB" && k == sqldb.Postgres:
		t.load = `'\x' || hex(` + col + `)`
	case typ == "BLOB":
		t.load, t.unhex = "hex("+col+")", true
	case k == sqldb.MySQL && typ == "BOOLEAN":
		t.load = "CAST(" + col + " AS INTEGER)"
	case k == sqldb.MySQL && (typ == "TIMESTAMPTZ" || typ == "TIMESTAMP WITH TIME ZONE"):
		t.load = "CAST(CAST(" + col + " AS TIMESTAMP) AS VARCHAR)" // UTC: the conversion session is in UTC
	case k == sqldb.MySQL && typ == "VARCHAR" && key:
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
