package duckdb

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// readEvolved reads src into a Parquet sink and returns its rows as query
// gives them, ordered by the first column.
func readEvolved(t *testing.T, src engine.Source) ([]string, engine.SourceResult) {
	t.Helper()
	e := newEngine(t)
	dir := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{{Ctx: "out", From: src.Ctx, Format: "parquet", Location: dir}}})
	return query(t, "SELECT * FROM read_parquet('"+dir+"/*.parquet') ORDER BY 1"), res.Sources[src.Ctx]
}

// TestRescueFormattedColumns: a date read with a dateformat is converted
// with it, and a value that does not parse is rescued.
func TestRescueFormattedColumns(t *testing.T) {
	root := t.TempDir()
	src := engine.Source{Ctx: "s", Format: "csv", SchemaEvolution: bookmark.EvolveRescue,
		Options: map[string]any{"dateformat": "%m/%d/%Y"},
		Schema:  []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "d", Type: "DATE"}},
		Files:   []engine.Input{input(t, root, "a.csv", []byte("id,d\n1,01/02/2024\n2,x\n"))}}
	rows, _ := readEvolved(t, src)
	equal(t, "rows", rows, []string{"1|2024-01-02 00:00:00 +0000 UTC|<nil>", `2|<nil>|{"d":"x","_file":"a.csv"}`})
}

// TestEvolveWithRejects: new columns and rescued values under skip, where
// CSV and JSON are read into a table (JSON through its lines): a malformed
// row is still rejected and counted.
func TestEvolveWithRejects(t *testing.T) {
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}
	e := newEngine(t)
	run := func(src engine.Source) ([]string, engine.SourceResult) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "out")
		res := execute(t, e, engine.Plan{OnBadRecord: engine.BadSkip, Sources: []engine.Source{src},
			Sinks: []engine.Sink{{Ctx: "out", From: src.Ctx, Format: "parquet", Location: dir}}})
		return query(t, "SELECT * FROM read_parquet('"+dir+"/*.parquet') ORDER BY 1"), res.Sources[src.Ctx]
	}
	js := engine.Source{Ctx: "j", Format: "json", Schema: schema, SchemaEvolution: bookmark.EvolveAddNewColumns, Files: []engine.Input{
		input(t, root, "mon.json", []byte(`{"id":1,"amount":2.5}`+"\n")),
		input(t, root, "thu.json", []byte(`{"id":2,"amount":3,"coupon":"X"}`+"\n"+`{"id":`+"\n")),
	}}
	rows, res := run(js)
	equal(t, "json rows", rows, []string{"1|2.5|<nil>", "2|3|X"})
	equal(t, "json rejected", res.Rejected, int64(1))
	equal(t, "json schema", schemaString(res.Schema), schemaString(append(schema, bookmark.Column{Name: "coupon", Type: "VARCHAR"})))

	cs := engine.Source{Ctx: "c", Format: "csv", Schema: schema, SchemaEvolution: bookmark.EvolveRescue, Files: []engine.Input{
		input(t, root, "fri.csv", []byte("id,amount\n1,2.5\n2,3,4\n3,n/a\n")),
	}}
	rows, res = run(cs)
	equal(t, "csv rows", rows, []string{"1|2.5|<nil>", `3|<nil>|{"amount":"n/a","_file":"fri.csv"}`})
	equal(t, "csv rejected", res.Rejected, int64(1))

	jr := engine.Source{Ctx: "r", Format: "json", Schema: schema, SchemaEvolution: bookmark.EvolveRescue, Files: []engine.Input{
		input(t, root, "mon.json", []byte(`{"id":1,"amount":2.5}`+"\n")),
		input(t, root, "thu.json", []byte(`{"id":2,"amount":"n/a","coupon":"X"}`+"\n"+`{"id":`+"\n"+`{"id":3}`+"\n")),
	}}
	rows, res = run(jr)
	equal(t, "json rescue rows", rows, []string{"1|2.5|<nil>", `2|<nil>|{"amount":"n/a","coupon":"X","_file":"thu.json"}`, "3|<nil>|<nil>"})
	equal(t, "json rescue rejected", res.Rejected, int64(1))
}

// TestEvolveHive: partition columns stay partition columns when a file
// brings a new column.
func TestEvolveHive(t *testing.T) {
	root := t.TempDir()
	src := engine.Source{Ctx: "h", Format: "csv", Hive: true, SchemaEvolution: bookmark.EvolveAddNewColumns,
		Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "day", Type: "BIGINT"}},
		Files: []engine.Input{
			input(t, root, "day=1/a.csv", []byte("id\n1\n")),
			input(t, root, "day=4/b.csv", []byte("id,coupon\n2,X\n")),
		}}
	rows, res := readEvolved(t, src)
	equal(t, "rows", rows, []string{"1|<nil>|1", "2|X|4"})
	equal(t, "schema", schemaString(res.Schema), "id BIGINT, coupon VARCHAR, day BIGINT")
}

// TestEvolveEveryRowMalformed: under add_new_columns, a file with a new
// column whose every row is malformed is a bad record (the widening read,
// which skips malformed rows, counts over no rows), not a failure of the
// type check.
func TestEvolveEveryRowMalformed(t *testing.T) {
	root := t.TempDir()
	e := newEngine(t)
	src := engine.Source{Ctx: "c", Format: "csv", SchemaEvolution: bookmark.EvolveAddNewColumns,
		Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}},
		Files:  []engine.Input{input(t, root, "thu.csv", []byte("id,amount,coupon\n4,40\n"))}}
	dir := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{OnBadRecord: engine.BadSkip, Sources: []engine.Source{src},
		Sinks: []engine.Sink{{Ctx: "out", From: src.Ctx, Format: "parquet", Location: dir}}})
	equal(t, "rejected", res.Sources["c"].Rejected, int64(1))
}

// TestEvolveEmptyJSONKey: a new key "" cannot be a column; under
// add_new_columns and rescue the source fails naming the file (DuckDB
// failed on the SQL it was given: "Need named argument for struct pack",
// "zero-length delimited identifier").
func TestEvolveEmptyJSONKey(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	for _, mode := range []string{bookmark.EvolveAddNewColumns, bookmark.EvolveRescue} {
		t.Run(mode, func(t *testing.T) {
			src := engine.Source{Ctx: "j", Format: "json", SchemaEvolution: mode,
				Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}},
				Files:  []engine.Input{input(t, root, "empty.json", []byte(`{"id":2,"":5}`+"\n"))}}
			_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src},
				Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}}})
			ie := inputError(t, err)
			equal(t, "file", ie.File, "empty.json")
			if !strings.Contains(ie.Msg, "empty key") {
				t.Errorf("got message %q, want it to name the empty key", ie.Msg)
			}
		})
	}
}
