package duckdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestLosslessValues: a value converts into its recorded type only when
// nothing is lost; else the run fails naming file, line and column (CSV
// and JSON alike).
func TestLosslessValues(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		typ, value string
		want       string // the value read back, or "" for a bad record
		opts       map[string]any
	}{
		{"BIGINT", "7", "7", nil},
		{"BIGINT", " -7 ", "-7", nil},
		{"BIGINT", "7.0", "7", nil},
		{"BIGINT", "1.5", "", nil},
		{"BIGINT", "1e3", "1000", nil},
		{"BIGINT", "15e-1", "", nil},
		{"BIGINT", "0.5", "", nil},
		{"BIGINT", "12345678901234567.5", "", nil},
		{"BIGINT", "12345678901234567.0", "12345678901234567", nil},
		{"BIGINT", "9007199254740993", "9007199254740993", nil},
		{"BIGINT", "9223372036854775808", "", nil},
		{"INTEGER", "2147483648", "", nil},
		{"UBIGINT", "-1", "", nil},
		{"BIGINT", "1,000", "1000", map[string]any{"thousands": ","}},
		{"DECIMAL(10,2)", "1.23", "1.23", nil},
		{"DECIMAL(10,2)", "1.2300", "1.23", nil},
		{"DECIMAL(10,2)", "1.234", "", nil},
		{"DECIMAL(10,2)", "1e-5", "", nil},
		{"DECIMAL(10,2)", "123456789.5", "", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00", "2024-01-01 10:00:00 +0000 UTC", nil},
		{"TIMESTAMP", "2024-01-01T10:00:00Z", "2024-01-01 10:00:00 +0000 UTC", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00+00:00", "2024-01-01 10:00:00 +0000 UTC", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00.123456", "2024-01-01 10:00:00.123456 +0000 UTC", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00.1234560", "2024-01-01 10:00:00.123456 +0000 UTC", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00+02", "", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00-05:30", "", nil},
		{"TIMESTAMP", "2024-01-01 10:00:00.1234567", "", nil},
		{"TIMESTAMP", "2024-01-01", "2024-01-01 00:00:00 +0000 UTC", nil},
		{"TIMESTAMP WITH TIME ZONE", "2024-01-01 10:00:00+02", "2024-01-01 08:00:00 +0000 UTC", nil},
		{"DATE", "2024-01-01", "2024-01-01 00:00:00 +0000 UTC", nil},
		{"DATE", "2024-01-01 00:00:00", "2024-01-01 00:00:00 +0000 UTC", nil},
		{"DATE", "2024-01-01 10:00:00", "", nil},
		{"DOUBLE", "1.5", "1.5", nil},
	} {
		for _, format := range []string{"csv", "json"} {
			if format == "json" && (tc.opts != nil || len(tc.value) > 17) {
				// DuckDB parses a JSON number with more digits than a
				// DOUBLE holds into a DOUBLE before anything sees it.
				continue
			}
			t.Run(format+" "+tc.typ+" "+tc.value, func(t *testing.T) {
				root := t.TempDir()
				schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: tc.typ}}
				var content string
				switch format {
				case "csv":
					content = "id,v\n1,\n2,\"" + tc.value + "\"\n"
				case "json":
					v := `"` + tc.value + `"`
					if tc.typ == "BIGINT" || strings.HasPrefix(tc.typ, "DECIMAL") {
						v = strings.TrimSpace(tc.value)
					}
					content = `{"id":1,"v":null}` + "\n" + `{"id":2,"v":` + v + "}\n"
				}
				opts := map[string]any{}
				for k, v := range tc.opts {
					opts[k] = v
				}
				in := input(t, root, "x."+format, []byte(content))
				out := filepath.Join(t.TempDir(), "out")
				_, err := e.Execute(context.Background(), engine.Plan{
					Sources: []engine.Source{{Ctx: "src", Format: format, Schema: schema, Options: opts, Files: []engine.Input{in}}},
					Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
				})
				want := tc.want
				if want == "" {
					ie := inputError(t, err)
					equal(t, "file", ie.File, "x."+format)
					equal(t, "column", ie.Column, "v")
					line := int64(3)
					if format == "json" {
						line = 2
					}
					equal(t, "line", ie.Line, line)
					if !strings.Contains(ie.Msg, "without loss") {
						t.Errorf("msg = %q", ie.Msg)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got := query(t, "SELECT v FROM read_parquet("+literal(filepath.Join(out, "*.parquet"))+") WHERE id = 2")
				equal(t, "value", got, []string{want})
			})
		}
	}
}

// TestLosslessSkip: under skip, rows whose values do not fit are counted
// and dropped; the others are read.
func TestLosslessSkip(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		OnBadRecord: engine.BadSkip,
		Sources: []engine.Source{{Ctx: "src", Format: "csv", Schema: schema, Files: []engine.Input{
			input(t, root, "a.csv", []byte("id,amount\n1,10\n2,1.5\n3,30\n4,4.0\n")),
			input(t, root, "b.csv", []byte("amount,id\n2.5,5\n60,6\n")),
		}}},
		Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	equal(t, "rows", res.Sources["src"].Rows, 4)
	equal(t, "rejected", res.Sources["src"].Rejected, 2)
	got := query(t, "SELECT id, amount FROM read_parquet("+literal(filepath.Join(out, "*.parquet"))+") ORDER BY id")
	equal(t, "rows read", got, []string{"1|10", "3|30", "4|4", "6|60"})
}
