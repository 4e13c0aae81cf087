package duckdb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// TestSchemaInferredThenApplied infers on a first run (a column that is
// int in one file and text in another becomes VARCHAR), then applies the
// recorded schema on a second run to files that alone would infer
// differently, and gets the same schema.
func TestSchemaInferredThenApplied(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	var ints strings.Builder
	ints.WriteString("code,amount,day\n")
	for i := range 100 {
		fmt.Fprintf(&ints, "%d,%d.5,2024-01-%02d\n", i, i, 1+i%28)
	}
	src := engine.Source{Ctx: "src", Format: "csv", Files: []engine.Input{
		input(t, root, "1.csv", []byte(ints.String())),
		input(t, root, "2.csv", []byte("code,amount,day\nX-1,1,2024-02-01\n")),
	}}
	plan := func(src engine.Source) engine.Plan {
		return engine.Plan{
			Sources: []engine.Source{src},
			Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
		}
	}
	res := execute(t, e, plan(src))
	first := res.Sources["src"].Schema
	equal(t, "inferred", schemaString(first), "code VARCHAR, amount DOUBLE, day DATE")
	equal(t, "rows", res.Sources["src"].Rows, 101)

	src.Schema = first
	src.Files = []engine.Input{input(t, root, "3.csv", []byte("code,amount,day\n7,8,2024-03-01\n"))}
	res = execute(t, e, plan(src))
	equal(t, "applied", schemaString(res.Sources["src"].Schema), schemaString(first))
	equal(t, "rows", res.Sources["src"].Rows, 1)

	// JSON likewise; DuckDB types a column of ints and strings as JSON.
	jsrc := engine.Source{Ctx: "j", Format: "json", Files: []engine.Input{
		input(t, root, "1.json", []byte(`{"a":1,"b":"x"}`+"\n")),
		input(t, root, "2.json", []byte(`{"a":"text","b":"y"}`+"\n")),
	}}
	res = execute(t, e, plan(jsrc))
	equal(t, "json inferred", schemaString(res.Sources["j"].Schema), "a JSON, b VARCHAR")
	jsrc.Schema = res.Sources["j"].Schema
	jsrc.Files = []engine.Input{input(t, root, "3.json", []byte(`{"a":5,"b":"z"}`+"\n"))}
	res = execute(t, e, plan(jsrc))
	equal(t, "json applied", schemaString(res.Sources["j"].Schema), "a JSON, b VARCHAR")
}

// TestCastErrorWithRecordedSchema: a value that does not fit the recorded
// type fails with file, line and column.
func TestCastErrorWithRecordedSchema(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	src := engine.Source{Ctx: "src", Format: "csv",
		Schema: []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}},
		Files: []engine.Input{
			input(t, root, "ok.csv", []byte("id,name\n1,a\n")),
			input(t, root, "dir/bad.csv", []byte("id,name\n1,a\n2,b\nabc,c\n")),
		}}
	_, err := e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{src},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	ie := inputError(t, err)
	equal(t, "file", ie.File, "dir/bad.csv")
	equal(t, "line", ie.Line, 4)
	equal(t, "column", ie.Column, "id")
	if !strings.Contains(ie.Msg, `"abc"`) || strings.Contains(ie.Msg, root) {
		t.Errorf("msg = %q, want the bad value and no local path", ie.Msg)
	}
	t.Log(err)
}

func TestParquetSchemaMismatch(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	good := writeParquet(t, root, "good.parquet", "SELECT 1::BIGINT AS id, 'a' AS name")
	cases := []struct {
		q, column string
	}{
		{"SELECT 1::INTEGER AS id, 'a' AS name", "id"},
		{"SELECT 1::BIGINT AS id", "name"},
		{"SELECT 1::BIGINT AS id, 'a' AS name, 2 AS extra", "extra"},
	}
	for i, c := range cases {
		t.Run(c.column, func(t *testing.T) {
			bad := writeParquet(t, root, fmt.Sprintf("sub/bad%d.parquet", i), c.q)
			// Inferred from the first file, checked against every file.
			_, err := e.Execute(t.Context(), engine.Plan{
				Sources: []engine.Source{{Ctx: "p", Format: "parquet", Files: []engine.Input{good, bad}}},
				Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
			})
			ie := inputError(t, err)
			equal(t, "file", ie.File, bad.Key)
			equal(t, "column", ie.Column, c.column)
			t.Log(err)
		})
	}
	// A recorded schema is applied to every file.
	_, err := e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{{Ctx: "p", Format: "parquet", Files: []engine.Input{good},
			Schema: []bookmark.Column{{Name: "id", Type: "INTEGER"}, {Name: "name", Type: "VARCHAR"}}}},
		Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	ie := inputError(t, err)
	equal(t, "file", ie.File, "good.parquet")
	equal(t, "msg", ie.Msg, "column id is BIGINT, want INTEGER (schema differs from the source's)")
}

func TestTruncatedParquet(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	good := writeParquet(t, root, "good.parquet", "SELECT range AS id, 'name-' || range AS name FROM range(10000)")
	data, err := os.ReadFile(good.Location)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{len(data) / 2, 10, len(data) - 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			bad := input(t, root, fmt.Sprintf("x/trunc%d.parquet", n), data[:n])
			_, err := e.Execute(t.Context(), engine.Plan{
				Sources: []engine.Source{{Ctx: "p", Format: "parquet", Files: []engine.Input{good, bad}}},
				Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
			})
			ie := inputError(t, err)
			equal(t, "file", ie.File, bad.Key)
			t.Log(err)
		})
	}
	// Damaged data pages with an intact footer: found by probing.
	corrupt := append([]byte(nil), data...)
	for i := 100; i < len(corrupt)/2; i++ {
		corrupt[i] ^= 0x5a
	}
	bad := input(t, root, "x/corrupt.parquet", corrupt)
	_, err = e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{{Ctx: "p", Format: "parquet", Files: []engine.Input{good, bad}}},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
	})
	ie := inputError(t, err)
	equal(t, "file", ie.File, bad.Key)
	t.Log(err)
}

// TestTypeChangeBeyondSample: a column that holds ints for 30,000 rows and
// then text is inferred BIGINT from DuckDB's sample; the first run fails
// naming file, line and column with advice, and the advised option works.
func TestTypeChangeBeyondSample(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("id,v\n")
	for i := range 30000 {
		fmt.Fprintf(&b, "%d,%d\n", i, i)
	}
	b.WriteString("abc,1\n")
	in := input(t, root, "x.csv", []byte(b.String()))
	plan := func(opts map[string]any) engine.Plan {
		return engine.Plan{
			Sources: []engine.Source{{Ctx: "src", Format: "csv", Options: opts, Files: []engine.Input{in}}},
			Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
		}
	}
	_, err := e.Execute(t.Context(), plan(nil))
	ie := inputError(t, err)
	equal(t, "line", ie.Line, 30002)
	equal(t, "column", ie.Column, "id")
	if !strings.Contains(ie.Msg, "types: {id: VARCHAR}") {
		t.Errorf("msg = %q, want advice", ie.Msg)
	}
	t.Log(err)
	res := execute(t, e, plan(map[string]any{"types": map[string]any{"id": "VARCHAR"}}))
	equal(t, "schema", schemaString(res.Sources["src"].Schema), "id VARCHAR, v BIGINT")
	equal(t, "rows", res.Sources["src"].Rows, 30001)
	res = execute(t, e, plan(map[string]any{"sample_size": -1}))
	equal(t, "schema with sample_size -1", schemaString(res.Sources["src"].Schema), "id VARCHAR, v BIGINT")
}

// TestParquetNestedRecordedSchema: a recorded schema with nested types, in
// the canonical texts a run records or in DuckDB's spellings an older
// state holds, fits the next file with the same columns (DuckDB describes
// STRUCT(k INTEGER, ...) where the recorded schema quotes the names).
func TestParquetNestedRecordedSchema(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	q := "SELECT %d AS id, [%[1]d] AS li, {'k': %[1]d, 'Odd Name': 'z'} AS st, MAP {'a': %[1]d} AS mp"
	plan := func(in engine.Input, schema []bookmark.Column) engine.Plan {
		return engine.Plan{
			Sources: []engine.Source{{Ctx: "p", Format: "parquet", Files: []engine.Input{in}, Schema: schema}},
			Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
		}
	}
	res := execute(t, e, plan(writeParquet(t, root, "1.parquet", fmt.Sprintf(q, 1)), nil))
	recorded := res.Sources["p"].Schema
	older := []bookmark.Column{{Name: "id", Type: "INTEGER"}, {Name: "li", Type: "INTEGER[]"},
		{Name: "st", Type: `STRUCT(k INTEGER, "Odd Name" VARCHAR)`}, {Name: "mp", Type: "MAP(VARCHAR, INTEGER)"}}
	for i, schema := range [][]bookmark.Column{recorded, older} {
		res := execute(t, e, plan(writeParquet(t, root, fmt.Sprintf("%d.parquet", i+2), fmt.Sprintf(q, i+2)), schema))
		equal(t, "rows", res.Sources["p"].Rows, 1)
		equal(t, "applied", schemaString(res.Sources["p"].Schema), schemaString(recorded))
	}
}

// TestJSONErrorLineAfterBlankLines: DuckDB's JSON reader numbers records,
// not lines, so after blank lines it named a line above the bad one; the
// error names the file's own line, in the message too.
func TestJSONErrorLineAfterBlankLines(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "s", Type: "STRUCT(x INTEGER)"}}
	for _, c := range []struct{ name, content string }{
		{"malformed", "{\"id\":1}\n\n \n\t\n{\"id\":2}\n{\"id\":\n"},
		{"not_an_object", "{\"id\":1}\n\n \n\t\n{\"id\":2}\n[1]\n"},
		{"nested_type", "{\"id\":1}\r\n\r\n \r\n\t\r\n{\"id\":2}\r\n{\"s\":5}\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := engine.Source{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{
				input(t, root, c.name+".json", []byte(c.content)),
			}}
			_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src},
				Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}}})
			ie := inputError(t, err)
			equal(t, "file", ie.File, c.name+".json")
			equal(t, "line", ie.Line, 6)
			if strings.Contains(ie.Msg, "line ") && !strings.Contains(ie.Msg, "line 6") {
				t.Errorf("got message %q, want it to name line 6", ie.Msg)
			}
		})
	}
}
