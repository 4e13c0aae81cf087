package duckdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestJSONNumbersTricky: the values of a VARCHAR column are read as written
// whatever else the line holds: an escaped key, the key's name inside a
// string or a nested object, spaces around the colon; nothing else is
// changed (the nested object's number, a string that looks like a number).
func TestJSONNumbersTricky(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	lines := `{"id":1,"s":1.50,"o":{"s":2.50}}` + "\n" +
		`{"id":2,"\u0073":1e3,"o":{"s":1e3}}` + "\n" +
		`{"id":3,"o":{"s":0.10},"t":"\"s\":9.90","s"  :  -0}` + "\n" +
		`{"id":4,"s":"7.70","o":null}` + "\n"
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "s", Type: "VARCHAR"}, {Name: "o", Type: "STRUCT(s DOUBLE)"}, {Name: "t", Type: "VARCHAR"}}
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "n", Format: "json", Schema: schema,
		Files: []engine.Input{input(t, root, "n.json", []byte(lines))}}},
		Sinks: []engine.Sink{{Ctx: "out", From: "n", Format: "parquet", Location: out}}})
	got := query(t, "SELECT id, s, o.s, t FROM read_parquet('"+filepath.Join(out, res.Sinks["out"].Files[0].Path)+"') ORDER BY id")
	want := []string{"1|1.50|2.5|<nil>", "2|1e3|1000|<nil>", `3|-0|0.1|"s":9.90`, "4|7.70|<nil>|<nil>"}
	equal(t, "rows", got, want)
}

// TestJSONNumbersOddKeys: keys that JSON's encoders would escape (<, &)
// or that a file can only hold escaped (a quote) are found too.
func TestJSONNumbersOddKeys(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	for _, c := range []struct {
		line string
		cols []bookmark.Column
		want string
	}{
		{`{"a<b":1.50,"a&b":1e3}`, []bookmark.Column{{Name: "a<b", Type: "VARCHAR"}, {Name: "a&b", Type: "DECIMAL(10,2)"}}, "1.50|1000"},
		{`{"q\"k":2.50}`, []bookmark.Column{{Name: `q"k`, Type: "VARCHAR"}}, "2.50"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "n", Format: "json", Schema: c.cols,
			Files: []engine.Input{input(t, root, "n.json", []byte(c.line+"\n"))}}},
			Sinks: []engine.Sink{{Ctx: "out", From: "n", Format: "parquet", Location: out}}})
		got := query(t, "SELECT * FROM read_parquet('"+filepath.Join(out, res.Sinks["out"].Files[0].Path)+"')")
		equal(t, c.line, got, []string{c.want})
	}
}

// TestJSONNumbersCompressed: a compressed file with a number a VARCHAR or
// DECIMAL column would read changed is refused, naming file, line and
// column; one without is read.
func TestJSONNumbersCompressed(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "d", Type: "DECIMAL(38,10)"}}
	ok := input(t, root, "ok.json.gz", gz(t, `{"id":1,"d":"1.5"}`+"\n"+`{"id":2,"d":7}`+"\n"))
	bad := input(t, root, "bad.json.gz", gz(t, `{"id":1,"d":"1.5"}`+"\n"+`{"id":2,"d":-99999999.9999999999}`+"\n"))
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "n", Format: "json", Schema: schema, Files: []engine.Input{ok}}},
		Sinks: []engine.Sink{{Ctx: "out", From: "n", Format: "csv", Location: out}}})
	equal(t, "rows", res.Sinks["out"].Rows, 2)
	_, err := e.Execute(context.Background(), engine.Plan{Sources: []engine.Source{{Ctx: "n", Format: "json", Schema: schema, Files: []engine.Input{ok, bad}}},
		Sinks: []engine.Sink{{Ctx: "out", From: "n", Format: "csv", Location: filepath.Join(t.TempDir(), "out")}}})
	ie := inputError(t, err)
	equal(t, "file", ie.File, "bad.json.gz")
	equal(t, "line", ie.Line, 2)
	equal(t, "column", ie.Column, "d")
}

// TestJSONNumbersEvolving: under add_new_columns, whose widening pass reads
// every value as text, a DECIMAL(38,10) at its limit stays a DECIMAL and
// is read as written.
func TestJSONNumbersEvolving(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "d", Type: "DECIMAL(38,10)"}}
	in := input(t, root, "n.json", []byte(`{"id":1,"d":9999999999999999999999999999.9999999999}`+"\n"))
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "n", Format: "json", Schema: schema, SchemaEvolution: bookmark.EvolveAddNewColumns,
		Files: []engine.Input{in}}},
		Sinks: []engine.Sink{{Ctx: "out", From: "n", Format: "parquet", Location: out}}})
	equal(t, "schema", schemaString(res.Sources["n"].Schema), "id BIGINT, d DECIMAL(38,10)")
	got := query(t, "SELECT d::VARCHAR FROM read_parquet('"+filepath.Join(out, res.Sinks["out"].Files[0].Path)+"')")
	equal(t, "rows", got, []string{"9999999999999999999999999999.9999999999"})
}
