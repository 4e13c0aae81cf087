package duckdb

import (
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

func TestDuckTypeMapping(t *testing.T) {
	for _, tc := range []struct {
		duck  string // as DuckDB describes it
		model string // canonical text
	}{
		{"BIGINT", "BIGINT"},
		{"DECIMAL(18,3)", "DECIMAL(18,3)"},
		{"TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE"},
		{"TIMESTAMP_NS", "TIMESTAMP_NS"},
		{"VARCHAR", "VARCHAR"},
		{"INTEGER[]", "ARRAY<INTEGER>"},
		{"VARCHAR[][]", "ARRAY<ARRAY<VARCHAR>>"},
		{`STRUCT(a INTEGER, "b c" DOUBLE[])`, `STRUCT<a: INTEGER, "b c": ARRAY<DOUBLE>>`},
		{"MAP(VARCHAR, BIGINT)", "MAP<VARCHAR, BIGINT>"},
		{"ENUM('x', 'y')", "ENUM('x', 'y')"},
	} {
		m, err := modelType(tc.duck)
		if err != nil {
			t.Fatalf("modelType(%q): %v", tc.duck, err)
		}
		if got := m.String(); got != tc.model {
			t.Errorf("modelType(%q) = %q, want %q", tc.duck, got, tc.model)
		}
		back := duckType(bookmark.MustParseType(tc.model))
		again, err := modelType(back)
		if err != nil || again.String() != tc.model {
			t.Errorf("duckType(%q) = %q, which reads back as %v (%v), want %q", tc.model, back, again, err, tc.model)
		}
	}
}

// TestDuckTypesInDuckDB checks that DuckDB accepts every spelling duckType
// makes and describes it as the same model type.
func TestDuckTypesInDuckDB(t *testing.T) {
	e := newEngine(t)
	c, err := e.db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, model := range []string{"ARRAY<INTEGER>", `STRUCT<a: INTEGER, "b c": ARRAY<DOUBLE>>`, "MAP<VARCHAR, BIGINT>",
		"TIMESTAMP WITH TIME ZONE", "DECIMAL(10,2)", "UUID", "BLOB", "INTERVAL", "HUGEINT", "TIME"} {
		duck := duckType(bookmark.MustParseType(model))
		cols, err := describe(t.Context(), c, "SELECT CAST(NULL AS "+duck+") AS c")
		if err != nil {
			t.Fatalf("%s as %s: %v", model, duck, err)
		}
		if got := modelColumns(cols)[0].Type; got != model {
			t.Errorf("DuckDB describes CAST(NULL AS %s) as %q, model %q, want %q", duck, cols[0].Type, got, model)
		}
	}
}
