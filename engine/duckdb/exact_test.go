package duckdb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
)

// TestFirstRunKeepsLongNumbers: a first run keeps a CSV number with more
// significant digits than a DOUBLE holds as written, as VARCHAR (DuckDB
// inferred DOUBLE and wrote 0.12345678901234567890 as
// 0.12345678901234568, and 12345678901234567890 beside 1.5 as
// 1.2345678901234567e+19), while 0.30000000000000004, which a DOUBLE
// keeps, stays DOUBLE, and a column pinned with the types option keeps
// its type.
func TestFirstRunKeepsLongNumbers(t *testing.T) {
	e := newEngine(t)
	in := input(t, t.TempDir(), "f.csv", []byte("id,x,y,z\n1,0.12345678901234567890,0.30000000000000004,12345678901234567890\n2,1.5,2.5,1.5\n"))
	run := func(opts map[string]any) (string, string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "out")
		res := execute(t, e, engine.Plan{
			Sources: []engine.Source{{Ctx: "f", Format: "csv", Options: opts, Files: []engine.Input{in}}},
			Sinks:   []engine.Sink{{Ctx: "snk", From: "f", Format: "csv", Location: dir}},
		})
		data, err := os.ReadFile(filepath.Join(dir, res.Sinks["snk"].Files[0].Path))
		if err != nil {
			t.Fatal(err)
		}
		return schemaString(res.Sources["f"].Schema), string(data)
	}
	schema, data := run(nil)
	equal(t, "schema", schema, "id BIGINT, x VARCHAR, y DOUBLE, z VARCHAR")
	for _, v := range []string{"0.12345678901234567890,0.30000000000000004,12345678901234567890", "1.5,2.5,1.5"} {
		if !strings.Contains(data, v) {
			t.Errorf("written:\n%s\nwant %s in it", data, v)
		}
	}
	schema, _ = run(map[string]any{"types": map[string]any{"x": "DOUBLE"}})
	equal(t, "schema with x pinned", schema, "id BIGINT, x DOUBLE, y DOUBLE, z VARCHAR")
}
