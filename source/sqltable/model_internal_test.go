package sqltable

import (
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// modelCase is one database type name and the canonical text of the type
// it is read as, with its key kind.
type modelCase struct {
	db, model string
	key       keyKind
}

// TestPgModel: the names format_type reports (domains resolved) map to
// the type model.
func TestPgModel(t *testing.T) {
	for _, c := range []modelCase{
		{"smallint", "SMALLINT", keyInteger},
		{"integer", "INTEGER", keyInteger},
		{"bigint", "BIGINT", keyInteger},
		{"oid", "UINTEGER", keyInteger},
		{"numeric(12,3)", "DECIMAL(12,3)", keyDecimal},
		{"numeric(38,0)", "DECIMAL(38,0)", keyDecimal},
		{"numeric(50,10)", "VARCHAR", keyDecimal},
		{"numeric", "VARCHAR", keyDecimal},
		{"real", "FLOAT", keyFloat},
		{"double precision", "DOUBLE", keyFloat},
		{"text", "VARCHAR", keyOther},
		{"character varying(20)", "VARCHAR", keyOther},
		{"character varying", "VARCHAR", keyOther},
		{"character(5)", "VARCHAR", keyOther},
		{"character", "VARCHAR", keyOther},
		{"name", "VARCHAR", keyOther},
		{`"char"`, "VARCHAR", keyOther},
		{"citext", "VARCHAR", keyOther},
		{"boolean", "BOOLEAN", keyOther},
		{"date", "DATE", keyDate},
		{"timestamp without time zone", "TIMESTAMP", keyTimestamp},
		{"timestamp(6) without time zone", "TIMESTAMP", keyTimestamp},
		{"timestamp with time zone", "TIMESTAMP WITH TIME ZONE", keyTimestampTZ},
		{"timestamp(3) with time zone", "TIMESTAMP WITH TIME ZONE", keyTimestampTZ},
		{"time without time zone", "TIME", keyOther},
		{"time(6) without time zone", "TIME", keyOther},
		{"time with time zone", "VARCHAR", keyOther},
		{"interval", "INTERVAL", keyOther},
		{"interval day to second", "INTERVAL", keyOther},
		{"json", "JSON", keyOther},
		{"jsonb", "JSON", keyOther},
		{"bytea", "BLOB", keyOther},
		{"uuid", "UUID", keyOther},
		{"inet", "VARCHAR", keyOther},
		{"money", "VARCHAR", keyOther},
	} {
		col := pgColumn("c", pgType{base: c.db, typtype: "b"})
		if got := col.Type.String(); got != c.model {
			t.Errorf("%s: got %s, want %s", c.db, got, c.model)
		}
		if col.key != c.key {
			t.Errorf("%s: key kind %d, want %d", c.db, col.key, c.key)
		}
	}
	// An enum reads as its labels, whatever its name.
	if got := pgModel(pgType{base: "integer", typtype: "e"}).String(); got != "VARCHAR" {
		t.Errorf("enum: got %s, want VARCHAR", got)
	}
	for _, c := range []struct{ elem, model string }{
		{"integer", "ARRAY<INTEGER>"},
		{"text", "ARRAY<VARCHAR>"},
		{"timestamp with time zone", "ARRAY<TIMESTAMP WITH TIME ZONE>"},
		{"numeric(10,2)", "ARRAY<DECIMAL(10,2)>"},
		{"bytea", "ARRAY<VARCHAR>"}, // elements keep their \x hex text
		{"inet", "ARRAY<VARCHAR>"},
	} {
		typ := pgModel(pgType{base: c.elem + "[]", typtype: "b", category: "A", elem: c.elem})
		if got := typ.String(); got != c.model {
			t.Errorf("%s[]: got %s, want %s", c.elem, got, c.model)
		}
		if keyKindOf(typ) != keyOther || (column{Type: typ}).orderable() {
			t.Errorf("%s[]: an array must not be an orderable key", c.elem)
		}
	}
}

// TestPgColumn: the key kind follows the type, except a numeric the
// model reads as text, which still moves by key distances (compared in
// the database); bytea, arrays and the numerics read as DECIMAL (which
// refuse NaN and infinities) are rendered by SQL expressions.
func TestPgColumn(t *testing.T) {
	for _, c := range []struct {
		t        pgType
		key      keyKind
		rendered bool
	}{
		{pgType{base: "integer", typtype: "b"}, keyInteger, false},
		{pgType{base: "numeric(12,3)", typtype: "b"}, keyDecimal, true},
		{pgType{base: "numeric(50,10)", typtype: "b"}, keyDecimal, false},
		{pgType{base: "numeric", typtype: "b"}, keyDecimal, false},
		{pgType{base: "text", typtype: "b"}, keyOther, false},
		{pgType{base: "timestamp with time zone", typtype: "b"}, keyTimestampTZ, false},
		{pgType{base: "bytea", typtype: "b"}, keyOther, true},
		{pgType{base: "numeric[]", typtype: "b", category: "A", elem: "numeric"}, keyOther, true},
		{pgType{base: "bytea[]", typtype: "b", category: "A", elem: "bytea"}, keyOther, true},
	} {
		col := pgColumn("c", c.t)
		if col.key != c.key {
			t.Errorf("%s: key kind %d, want %d", c.t.base, col.key, c.key)
		}
		if got := col.out != ""; got != c.rendered {
			t.Errorf("%s: rendered by an expression %v, want %v (%s)", c.t.base, got, c.rendered, col.out)
		}
	}
}

// TestMysqlModel: COLUMN_TYPE texts (lower case, as columns() passes them)
// and the driver's names for query columns map to the type model, with
// the cast key values get and their key kind.
func TestMysqlModel(t *testing.T) {
	for _, c := range []struct {
		db, model, cast string
		key             keyKind
	}{
		{"tinyint(4)", "TINYINT", "SIGNED", keyInteger},
		{"tinyint", "TINYINT", "SIGNED", keyInteger},
		{"tinyint(3) unsigned", "UTINYINT", "UNSIGNED", keyInteger},
		{"smallint(6)", "SMALLINT", "SIGNED", keyInteger},
		{"smallint unsigned", "USMALLINT", "UNSIGNED", keyInteger},
		{"mediumint(9)", "INTEGER", "SIGNED", keyInteger},
		{"mediumint unsigned", "UINTEGER", "UNSIGNED", keyInteger},
		{"int(11)", "INTEGER", "SIGNED", keyInteger},
		{"int", "INTEGER", "SIGNED", keyInteger},
		{"int(10) unsigned", "UINTEGER", "UNSIGNED", keyInteger},
		{"bigint(20)", "BIGINT", "SIGNED", keyInteger},
		{"bigint(20) unsigned", "UBIGINT", "UNSIGNED", keyInteger},
		{"bigint unsigned zerofill", "UBIGINT", "UNSIGNED", keyInteger},
		{"unsigned bigint", "UBIGINT", "UNSIGNED", keyInteger}, // the driver's name for a query column
		{"decimal(12,3)", "DECIMAL(12,3)", "DECIMAL(12,3)", keyDecimal},
		{"decimal(50,10)", "VARCHAR", "DECIMAL(50,10)", keyDecimal},
		{"decimal", "VARCHAR", "", keyDecimal},
		{"float", "FLOAT", "FLOAT", keyFloat},
		{"double", "DOUBLE", "DOUBLE", keyFloat},
		{"real", "DOUBLE", "DOUBLE", keyFloat},
		{"date", "DATE", "DATE", keyDate},
		{"datetime(6)", "TIMESTAMP", "DATETIME(6)", keyTimestamp},
		{"datetime", "TIMESTAMP", "DATETIME(6)", keyTimestamp},
		{"timestamp(6)", "TIMESTAMP WITH TIME ZONE", "DATETIME(6)", keyTimestampTZ},
		{"timestamp", "TIMESTAMP WITH TIME ZONE", "DATETIME(6)", keyTimestampTZ},
		{"time(6)", "TIME", "TIME(6)", keyOther},
		{"year(4)", "SMALLINT", "SIGNED", keyInteger},
		{"year", "SMALLINT", "SIGNED", keyInteger},
		{"json", "JSON", "", keyOther},
		{"longtext", "VARCHAR", "", keyOther},
		{"varchar(20)", "VARCHAR", "", keyOther},
		{"char(36)", "VARCHAR", "", keyOther},
		{"text", "VARCHAR", "", keyOther},
		{"enum('x','y')", "VARCHAR", "", keyOther},
		{"set('a','b')", "VARCHAR", "", keyOther},
		{"binary(16)", "BLOB", "", keyOther},
		{"varbinary(10)", "BLOB", "", keyOther},
		{"blob", "BLOB", "", keyOther},
		{"tinyblob", "BLOB", "", keyOther},
		{"mediumblob", "BLOB", "", keyOther},
		{"longblob", "BLOB", "", keyOther},
		{"geometry", "BLOB", "", keyOther},
		{"point", "BLOB", "", keyOther},
		{"multipolygon", "BLOB", "", keyOther},
		{"geometrycollection", "BLOB", "", keyOther},
		{"bit(10)", "UBIGINT", "", keyOther},
		{"uuid", "UUID", "", keyOther},
	} {
		col := mysqlMap("c", c.db, false)
		if got := col.Type.String(); got != c.model {
			t.Errorf("%s: got %s, want %s", c.db, got, c.model)
		}
		if col.cast != c.cast {
			t.Errorf("%s: cast %q, want %q", c.db, col.cast, c.cast)
		}
		if col.key != c.key {
			t.Errorf("%s: key kind %d, want %d", c.db, col.key, c.key)
		}
	}
	// MariaDB's JSON: LONGTEXT with a json_valid check.
	if got := mysqlModel("longtext", true).String(); got != "JSON" {
		t.Errorf("MariaDB json: got %s, want JSON", got)
	}
	for db, format := range map[string]formatter{"timestamp(6)": fmtUTC, "blob": fmtBlob, "bit(10)": fmtBits} {
		if mysqlMap("c", db, false).format == nil {
			t.Errorf("%s: no formatter, want %p", db, format)
		}
	}
	if f := mysqlMap("c", "varchar(20)", false).format; f != nil {
		t.Errorf("varchar: a formatter, want the text as it is")
	}
}

// TestSqliteModel: declared types, in the spellings people write, map by
// SQLite's affinity rules refined for the names that say more.
func TestSqliteModel(t *testing.T) {
	for _, c := range []modelCase{
		{"INTEGER", "BIGINT", keyInteger},
		{"int", "BIGINT", keyInteger},
		{"BIGINT", "BIGINT", keyInteger},
		{"UNSIGNED BIG INT", "BIGINT", keyInteger},
		{"BOOLEAN", "BOOLEAN", keyOther},
		{"bool", "BOOLEAN", keyOther},
		{"DECIMAL(12,3)", "DECIMAL(12,3)", keyDecimal},
		{"NUMERIC( 10 , 2 )", "DECIMAL(10,2)", keyDecimal},
		{"DECIMAL(50,10)", "VARCHAR", keyOther},
		{"NUMERIC", "VARCHAR", keyOther},
		{"REAL", "DOUBLE", keyFloat},
		{"FLOAT", "DOUBLE", keyFloat},
		{"DOUBLE PRECISION", "DOUBLE", keyFloat},
		{"TEXT", "VARCHAR", keyOther},
		{"VARCHAR(20)", "VARCHAR", keyOther},
		{"DATE", "DATE", keyDate},
		{"DATETIME", "TIMESTAMP", keyTimestamp},
		{"TIMESTAMP", "TIMESTAMP", keyTimestamp},
		{"TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", keyTimestampTZ},
		{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE", keyTimestampTZ},
		{"TIME", "TIME", keyOther},
		{"JSON", "JSON", keyOther},
		{"UUID", "UUID", keyOther},
		{"BLOB", "BLOB", keyOther},
		{"VARBINARY(16)", "BLOB", keyOther},
		{"", "VARCHAR", keyOther},
		{"  ", "VARCHAR", keyOther},
	} {
		col := sqliteMap("c", c.db)
		if got := col.Type.String(); got != c.model {
			t.Errorf("%q: got %s, want %s", c.db, got, c.model)
		}
		if col.key != c.key {
			t.Errorf("%q: key kind %d, want %d", c.db, col.key, c.key)
		}
		if col.format == nil {
			t.Errorf("%q: no formatter (SQLite values are Go values)", c.db)
		}
	}
}

// TestOrderable: lists, blobs, JSON and intervals cannot be keys.
func TestOrderable(t *testing.T) {
	for text, want := range map[string]bool{
		"ARRAY<INTEGER>": false, "BLOB": false, "JSON": false, "INTERVAL": false,
		"INTEGER": true, "VARCHAR": true, "TIMESTAMP WITH TIME ZONE": true, "DECIMAL(10,2)": true, "UUID": true,
		"BOOLEAN": true, "DATE": true,
	} {
		if got := (column{Type: bookmark.MustParseType(text)}).orderable(); got != want {
			t.Errorf("%s: orderable %v, want %v", text, got, want)
		}
	}
}
