package duckdb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// badSource has 5 good rows and 3 bad ones: a missing column (line 4), a
// surplus column with a bad value (line 3 of b.csv) and a value that is
// not a number (line 6). Its schema is the one a first run recorded.
func badSource(t *testing.T) engine.Source {
	t.Helper()
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}}
	return engine.Source{Ctx: "orders", Format: "csv", Schema: schema, Files: []engine.Input{
		input(t, root, "a.csv", []byte("id,name\n1,foo\n2,bar\n3\n4,baz\nabc,q\n")),
		input(t, root, "sub/b.csv", []byte("id,name\n5,x\nx,y,z\n6,w\n")),
	}}
}

func TestBadRecordFail(t *testing.T) {
	e := newEngine(t)
	_, err := e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{badSource(t)},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	ie := inputError(t, err)
	equal(t, "source", ie.Source, "orders")
	// DuckDB reads files in parallel: the error is about whichever bad
	// row a thread met first.
	bad := map[string]bool{"a.csv:4": true, "a.csv:6": true, "sub/b.csv:3": true}
	if !bad[fmt.Sprintf("%s:%d", ie.File, ie.Line)] {
		t.Errorf("got %s line %d, want one of %v", ie.File, ie.Line, bad)
	}
	t.Log(err)

	// JSON: a malformed line names file and line.
	root := t.TempDir()
	_, err = e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{{Ctx: "j", Format: "json", Files: []engine.Input{
			input(t, root, "ok.json", []byte(`{"id":1}`+"\n")),
			input(t, root, "d/bad.json.gz", gz(t, `{"id":1}`+"\n"+`{"id": x}`+"\n"+`{"id":3}`+"\n")),
		}}},
		Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	ie = inputError(t, err)
	equal(t, "file", ie.File, "d/bad.json.gz")
	equal(t, "line", ie.Line, 2)
	t.Log(err)

	// JSON: a value of the wrong type names file and line.
	_, err = e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{{Ctx: "j", Format: "json",
			Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}},
			Files: []engine.Input{
				input(t, root, "t.json", []byte(`{"id":1}`+"\n"+`{"id":"one"}`+"\n")),
			}}},
		Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	ie = inputError(t, err)
	equal(t, "file", ie.File, "t.json")
	equal(t, "line", ie.Line, 2)
	t.Log(err)
}

func TestBadRecordSkip(t *testing.T) {
	e := newEngine(t)
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		OnBadRecord: engine.BadSkip,
		Sources:     []engine.Source{badSource(t)},
		// The transform uses only name: rows are rejected whole anyway.
		Transforms: []engine.Transform{{Name: "names", SQL: "SELECT name FROM orders"}},
		Sinks: []engine.Sink{
			{Ctx: "s1", From: "names", Format: "csv", Location: out},
			{Ctx: "s2", From: "orders", Format: "parquet", Location: filepath.Join(t.TempDir(), "o2")},
		},
	})
	equal(t, "rows", res.Sources["orders"].Rows, 5)
	equal(t, "rejected", res.Sources["orders"].Rejected, 3)
	equal(t, "sink rows", res.Sinks["s1"].Rows, 5)
	equal(t, "sink 2 rows", res.Sinks["s2"].Rows, 5)
	got := query(t, "SELECT name FROM read_csv('"+filepath.Join(out, "data_0.csv")+"') ORDER BY name")
	equal(t, "names", got, []string{"bar", "baz", "foo", "w", "x"})
}

func TestBadRecordQuarantine(t *testing.T) {
	e := newEngine(t)
	rejects := filepath.Join(t.TempDir(), "rejects")
	res := execute(t, e, engine.Plan{
		OnBadRecord: engine.BadQuarantine,
		Rejects:     rejects,
		Sources:     []engine.Source{badSource(t)},
		Sinks:       []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	equal(t, "rows", res.Sources["orders"].Rows, 5)
	equal(t, "rejected", res.Sources["orders"].Rejected, 3)
	f, err := os.Open(filepath.Join(rejects, "orders", "rejects.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range records {
		got = append(got, strings.Join([]string{r[0], r[1], r[2], r[4]}, " "))
	}
	equal(t, "rejects", got, []string{
		"file line column raw",
		"a.csv 4 name 3",
		"a.csv 6 id abc,q",
		// A surplus column: id is read as text and checked after the
		// reader, which reports only the surplus column, with no column.
		"sub/b.csv 3  x,y,z",
	})
	if !strings.Contains(records[2][3], `value "abc" does not convert to the column's type BIGINT`) {
		t.Errorf("error = %q, want the conversion error", records[2][3])
	}

	// A second Execute into the same folder keeps the first file.
	execute(t, e, engine.Plan{
		OnBadRecord: engine.BadQuarantine,
		Rejects:     rejects,
		Sources:     []engine.Source{badSource(t)},
		Sinks:       []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	if _, err := os.Stat(filepath.Join(rejects, "orders", "rejects-2.csv")); err != nil {
		t.Errorf("second rejects file: %v", err)
	}
}

func TestBadRecordJSON(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "n", Type: "VARCHAR"}, {Name: "s", Type: "STRUCT(x INTEGER)"}}
	lines := []string{
		`{"id":1,"n":"a","s":{"x":1}}`,
		``,                     // skipped, as read_json does
		`{"id": x}`,            // malformed: line 3
		`{"id":"q","n":"b"}`,   // not a BIGINT: line 4
		`{"n":"c"}`,            // missing keys are NULL
		`[1,2]`,                // not an object: line 6
		`{"id":"7","n":8}`,     // converts
		`{"id": x}`,            // the same bad line again: line 8
		`{"id":9,"s":{"x":2}}`, //
	}
	src := engine.Source{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{
		input(t, root, "ok.json", []byte(`{"id":0}`+"\n")),
		input(t, root, "d/bad.json.zst", zst(t, strings.Join(lines, "\n")+"\n")),
	}}
	rejects := filepath.Join(t.TempDir(), "rejects")
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		OnBadRecord: engine.BadQuarantine,
		Rejects:     rejects,
		Sources:     []engine.Source{src},
		Sinks:       []engine.Sink{{Ctx: "snk", Format: "json", Location: out}},
	})
	equal(t, "rows", res.Sources["j"].Rows, 5)
	equal(t, "rejected", res.Sources["j"].Rejected, 4)
	got := query(t, "SELECT id, n, s FROM read_json('"+filepath.Join(out, "data_0.json")+"', format='newline_delimited') ORDER BY id NULLS LAST")
	equal(t, "rows", got, []string{"0|<nil>|<nil>", "1|a|map[x:1]", "7|8|<nil>", "9|<nil>|map[x:2]", "<nil>|c|<nil>"})
	f, err := os.Open(filepath.Join(rejects, "j", "rejects.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range records[1:] {
		rows = append(rows, r[0]+" "+r[1]+" "+r[4])
	}
	equal(t, "rejects", rows, []string{
		`d/bad.json.zst 3 {"id": x}`,
		`d/bad.json.zst 4 {"id":"q","n":"b"}`,
		`d/bad.json.zst 6 [1,2]`,
		`d/bad.json.zst 8 {"id": x}`,
	})
}

// TestBadRecordJSONMixedLineEndings: under skip, JSON Lines are read line
// by line, and DuckDB's line reader fails on a file whose lines end
// otherwise than its first one, saying only that its CSV state machine
// reached an invalid state. The error names the file and the line.
func TestBadRecordJSONMixedLineEndings(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}}
	for _, c := range []struct {
		name, content string
		line          int64
	}{
		{"crlf_then_lf", "{\"id\":1}\r\n{\"id\":2}\r\n{\"id\":3}\n", 3},
		{"lf_then_crlf", "{\"id\":1}\n{\"id\":2}\r\n", 2},
		{"carriage_return_inside", "{\"id\":1}\n{\"id\":2,\r\"id\":1}\n", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := engine.Source{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{
				input(t, root, c.name+".json.gz", gz(t, c.content)),
			}}
			_, err := e.Execute(t.Context(), engine.Plan{OnBadRecord: engine.BadSkip, Sources: []engine.Source{src},
				Sinks: []engine.Sink{{Ctx: "snk", Format: "json", Location: filepath.Join(t.TempDir(), "out")}}})
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got error %v, want an *engine.InputError", err)
			}
			equal(t, "file", ie.File, c.name+".json.gz")
			equal(t, "line", ie.Line, c.line)
			if !strings.Contains(ie.Msg, "ends otherwise") {
				t.Errorf("got message %q, want one saying the line ends otherwise", ie.Msg)
			}
		})
	}
}
