package sqltype

import (
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

func TestSparkType(t *testing.T) {
	cases := []struct{ in, want string }{
		{"BOOLEAN", "BOOLEAN"},
		{"INTEGER", "INT"},
		{"UINTEGER", "BIGINT"},
		{"UBIGINT", "DECIMAL(20,0)"},
		{"HUGEINT", "DECIMAL(38,0)"},
		{"FLOAT", "FLOAT"},
		{"DECIMAL(18,3)", "DECIMAL(18,3)"},
		{"VARCHAR", "STRING"},
		{"UUID", "STRING"},
		{"TIME", "STRING"},
		{"BLOB", "BINARY"},
		{"BIT", "BINARY"},
		{"TIMESTAMP_NS", "TIMESTAMP_NTZ"},
		{"TIMESTAMP", "TIMESTAMP_NTZ"},
		{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"},
		{"ARRAY<VARCHAR>", "ARRAY<STRING>"},
		{"MAP<VARCHAR, DOUBLE>", "MAP<STRING, DOUBLE>"},
		{`STRUCT<a: INTEGER, "b` + "`" + `c": DATE>`, "STRUCT<`a`: INT, `b``c`: DATE>"},
	}
	for _, c := range cases {
		ty, err := bookmark.ParseType(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got, err := Spark.Type(ty)
		if err != nil || got != c.want {
			t.Errorf("Type(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	ty, err := bookmark.ParseType("ENUM('a', 'b')")
	if err != nil {
		t.Fatalf("ENUM: %v", err)
	}
	if got, err := Spark.Type(ty); err == nil {
		t.Errorf("Type(ENUM) = %q, want an error", got)
	}
}

// TestTrinoType: Trino's names, and the same widening as Spark's.
func TestTrinoType(t *testing.T) {
	cases := []struct{ in, want string }{
		{"BOOLEAN", "BOOLEAN"},
		{"INTEGER", "INTEGER"},
		{"USMALLINT", "INTEGER"},
		{"UINTEGER", "BIGINT"},
		{"UBIGINT", "DECIMAL(20,0)"},
		{"UHUGEINT", "DECIMAL(38,0)"},
		{"FLOAT", "REAL"},
		{"DECIMAL(18,3)", "DECIMAL(18,3)"},
		{"VARCHAR", "VARCHAR"},
		{"INTERVAL", "VARCHAR"},
		{"BLOB", "VARBINARY"},
		{"BIT", "VARBINARY"},
		{"TIMESTAMP_MS", "TIMESTAMP"},
		{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP"},
		{"ARRAY<VARCHAR>", "ARRAY(VARCHAR)"},
		{"MAP<VARCHAR, DOUBLE>", "MAP(VARCHAR, DOUBLE)"},
		{`STRUCT<a: INTEGER, "b""c": DATE>`, `ROW("a" INTEGER, "b""c" DATE)`},
	}
	for _, c := range cases {
		ty, err := bookmark.ParseType(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got, err := Trino.Type(ty)
		if err != nil || got != c.want {
			t.Errorf("Trino.Type(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	ty, err := bookmark.ParseType("ENUM('a', 'b')")
	if err != nil {
		t.Fatalf("ENUM: %v", err)
	}
	if got, err := Trino.Type(ty); err == nil || !strings.Contains(err.Error(), "Trino") {
		t.Errorf("Trino.Type(ENUM) = %q, %v; want an error naming Trino", got, err)
	}
}

// TestDuckDBType: DuckDB's names are the canonical ones; nested types in
// DuckDB's spelling, an Other type kept verbatim.
func TestDuckDBType(t *testing.T) {
	cases := []struct{ in, want string }{
		{"UINTEGER", "UINTEGER"},
		{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE"},
		{"DECIMAL(18,3)", "DECIMAL(18,3)"},
		{"ARRAY<VARCHAR>", "VARCHAR[]"},
		{"MAP<VARCHAR, DOUBLE>", "MAP(VARCHAR, DOUBLE)"},
		{`STRUCT<a: INTEGER, "b""c": ARRAY<DATE>>`, `STRUCT("a" INTEGER, "b""c" DATE[])`},
		{"ENUM('a', 'b')", "ENUM('a', 'b')"},
	}
	for _, c := range cases {
		ty, err := bookmark.ParseType(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got, err := DuckDB.Type(ty)
		if err != nil || got != c.want {
			t.Errorf("DuckDB.Type(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
