package sparksql

import (
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

func TestType(t *testing.T) {
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
		got, err := Type(ty)
		if err != nil || got != c.want {
			t.Errorf("Type(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	ty, err := bookmark.ParseType("ENUM('a', 'b')")
	if err != nil {
		t.Fatalf("ENUM: %v", err)
	}
	if got, err := Type(ty); err == nil {
		t.Errorf("Type(ENUM) = %q, want an error", got)
	}
}
