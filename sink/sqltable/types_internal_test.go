package sqltable

import (
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// columnTypeCase is one output type, as the type model spells it or as
// DuckDB describes the staged Parquet, and the column type each database
// gets ("" when it has none: the type is refused).
type columnTypeCase struct {
	typ, pg, mysql string
}

var columnTypeCases = []columnTypeCase{
	{"BOOLEAN", "boolean", "boolean"},
	{"TINYINT", "smallint", "tinyint"},
	{"SMALLINT", "smallint", "smallint"},
	{"INTEGER", "integer", "int"},
	{"BIGINT", "bigint", "bigint"},
	{"HUGEINT", "numeric(39,0)", "decimal(39,0)"},
	{"UTINYINT", "smallint", "tinyint unsigned"},
	{"USMALLINT", "integer", "smallint unsigned"},
	{"UINTEGER", "bigint", "int unsigned"},
	{"UBIGINT", "numeric(20,0)", "bigint unsigned"},
	{"FLOAT", "real", "float"},
	{"DOUBLE", "double precision", "double"},
	{"DECIMAL(12,3)", "numeric(12,3)", "decimal(12,3)"},
	{"DECIMAL(38,10)", "numeric(38,10)", "decimal(38,10)"},
	{"VARCHAR", "text", "longtext"},
	{"DATE", "date", "date"},
	{"TIME", "time", "time(6)"},
	{"TIMESTAMP", "timestamp(6)", "datetime(6)"},
	{"TIMESTAMP_S", "timestamp(0)", "datetime"},
	{"TIMESTAMP_MS", "timestamp(3)", "datetime(3)"},
	{"TIMESTAMP_NS", "timestamp(6)", "datetime(6)"},
	{"TIMESTAMP WITH TIME ZONE", "timestamptz", "datetime(6)"},
	{"TIMESTAMPTZ", "timestamptz", "datetime(6)"}, // older states' and DuckDB's spelling
	{"INTERVAL", "interval", "varchar(100)"},
	{"BLOB", "bytea", "longblob"},
	{"UUID", "uuid", "char(36)"},
	{"JSON", "jsonb", "json"},
	{"UHUGEINT", "", ""},
	{"TIME WITH TIME ZONE", "", ""},
	{"BIT", "", ""},
	{"ENUM('x', 'y')", "", ""},
	// Lists: PostgreSQL arrays of a scalar (not bytea), MySQL JSON.
	{"ARRAY<INTEGER>", "integer[]", "json"},
	{"INTEGER[]", "integer[]", "json"},
	{"ARRAY<VARCHAR>", "text[]", "json"},
	{"VARCHAR[]", "text[]", "json"},
	{"ARRAY<DECIMAL(10,2)>", "numeric(10,2)[]", "json"},
	{"DECIMAL(10,2)[]", "numeric(10,2)[]", "json"},
	{"ARRAY<TIMESTAMP WITH TIME ZONE>", "timestamptz[]", "json"},
	{"ARRAY<BLOB>", "", "json"},
	{"BLOB[]", "", "json"},
	{"ARRAY<ARRAY<INTEGER>>", "", "json"},
	{"INTEGER[][]", "", "json"},
	{"ARRAY<STRUCT<a: INTEGER>>", "", "json"},
	{"STRUCT(a INTEGER)[]", "", "json"},
	{"ARRAY<UHUGEINT>", "", "json"},
	{"INTEGER[3]", "", ""}, // a fixed-size array is not a list
	// Structs and maps have no counterpart in either.
	{"STRUCT<a: INTEGER, b: VARCHAR>", "", ""},
	{"STRUCT(a INTEGER, b VARCHAR)", "", ""},
	{"MAP<VARCHAR, BIGINT>", "", ""},
	{"MAP(VARCHAR, BIGINT)", "", ""},
}

func TestColumnTypes(t *testing.T) {
	for _, c := range columnTypeCases {
		typ := bookmark.MustParseType(c.typ)
		for _, d := range []struct {
			name string
			fn   func(bookmark.Type) (string, bool)
			want string
		}{{"postgres", pgColumnType, c.pg}, {"mysql", mysqlColumnType, c.mysql}} {
			got, ok := d.fn(typ)
			if !ok {
				got = ""
			}
			if got != d.want || ok != (d.want != "") {
				t.Errorf("%s in %s: got %q (ok %v), want %q", c.typ, d.name, got, ok, d.want)
			}
		}
	}
}

// TestMapColumn: the load expression and the refusals follow the type.
func TestMapColumn(t *testing.T) {
	for _, c := range []struct {
		kind      sqldb.Kind
		typ       string
		key       bool
		ddl, load string
		unhex     bool
		err       string
	}{
		{sqldb.Postgres, "INTEGER", false, "integer", `"c"`, false, ""},
		{sqldb.Postgres, "BLOB", false, "bytea", `'\x' || hex("c")`, false, ""},
		{sqldb.MySQL, "BLOB", false, "longblob", `hex("c")`, true, ""},
		{sqldb.MySQL, "BOOLEAN", false, "boolean", `CAST("c" AS INTEGER)`, false, ""},
		{sqldb.MySQL, "TIMESTAMP WITH TIME ZONE", false, "datetime(6)", `CAST(CAST("c" AS TIMESTAMP) AS VARCHAR)`, false, ""},
		{sqldb.MySQL, "TIMESTAMPTZ", false, "datetime(6)", `CAST(CAST("c" AS TIMESTAMP) AS VARCHAR)`, false, ""},
		{sqldb.Postgres, "TIMESTAMP WITH TIME ZONE", false, "timestamptz", `"c"`, false, ""},
		{sqldb.MySQL, "VARCHAR", true, "varchar(255)", `"c"`, false, ""},
		{sqldb.MySQL, "VARCHAR", false, "longtext", `"c"`, false, ""},
		{sqldb.Postgres, "VARCHAR", true, "text", `"c"`, false, ""},
		{sqldb.MySQL, "ARRAY<INTEGER>", false, "json", `CAST(to_json("c") AS VARCHAR)`, false, ""},
		{sqldb.MySQL, "INTEGER[]", false, "json", `CAST(to_json("c") AS VARCHAR)`, false, ""},
		{sqldb.Postgres, "ARRAY<VARCHAR>", false, "text[]", `'{' || array_to_string(list_transform("c"`, false, ""},
		{sqldb.Postgres, "VARCHAR[]", false, "text[]", `'{' || array_to_string(list_transform("c"`, false, ""},
		{sqldb.Postgres, "BLOB[]", false, "", "", false, "type BLOB[] cannot be written to a PostgreSQL array"},
		{sqldb.Postgres, "ARRAY<ARRAY<INTEGER>>", false, "", "", false, "type ARRAY<ARRAY<INTEGER>> cannot be written to a PostgreSQL array"},
		{sqldb.Postgres, "STRUCT(a INTEGER)", false, "", "", false, "type STRUCT(a INTEGER) has no counterpart in postgres"},
		{sqldb.MySQL, "MAP<VARCHAR, BIGINT>", false, "", "", false, "type MAP<VARCHAR, BIGINT> has no counterpart in mysql"},
	} {
		got, err := mapColumn(c.kind, bookmark.Column{Name: "c", Type: c.typ}, c.key)
		name := c.kind.String() + " " + c.typ
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.ddl != c.ddl || !strings.HasPrefix(got.load, c.load) || got.unhex != c.unhex {
			t.Errorf("%s: got ddl %q, load %q, unhex %v; want %q, %q..., %v", name, got.ddl, got.load, got.unhex, c.ddl, c.load, c.unhex)
		}
	}
}
