package duckdb

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

func TestCSVToParquet(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	src := engine.Source{Ctx: "orders", Format: "csv", Options: map[string]any{"header": true}, Files: []engine.Input{
		input(t, root, "a.csv", []byte("id,product,amount\n1,apple,1.5\n2,pear,2\n")),
		input(t, root, "b.csv", []byte("id,product,amount\n3,fig,3.25\n")),
	}}
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{src},
		Sinks:   []engine.Sink{{Ctx: "s", From: "orders", Format: "parquet", Location: out}},
	})
	equal(t, "rows", res.Sources["orders"].Rows, 3)
	equal(t, "schema", schemaString(res.Sources["orders"].Schema), "id BIGINT, product VARCHAR, amount DOUBLE")
	equal(t, "sink rows", res.Sinks["s"].Rows, 3)
	equal(t, "files", paths(res.Sinks["s"].Files), []string{"data_0.parquet"})
	got := query(t, fmt.Sprintf("SELECT * FROM read_parquet('%s') ORDER BY id", filepath.Join(out, "data_0.parquet")))
	equal(t, "output", got, []string{"1|apple|1.5", "2|pear|2", "3|fig|3.25"})
	if f := res.Sinks["s"].Files[0]; f.Bytes <= 0 || f.Rows != 3 {
		t.Errorf("file = %+v, want rows 3 and bytes > 0", f)
	}
}

// TestFormats reads every input format and writes every output format.
func TestFormats(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	csvIn := input(t, root, "in/x.csv", []byte("id,name\n1,a\n2,b\n"))
	jsonIn := input(t, root, "in/x.json", []byte(`{"id":1,"name":"a"}`+"\n"+`{"id":2,"name":"b"}`+"\n"))
	pqDir := filepath.Join(t.TempDir(), "pq")
	execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "src", Format: "csv", Files: []engine.Input{csvIn}}},
		Sinks:   []engine.Sink{{Ctx: "pq", Format: "parquet", Location: pqDir}},
	})
	pqIn := engine.Input{Location: filepath.Join(pqDir, "data_0.parquet"), Key: "x.parquet", Size: 1}
	ins := map[string]engine.Input{"csv": csvIn, "json": jsonIn, "parquet": pqIn}
	readers := map[string]string{
		"parquet": "SELECT id, name FROM read_parquet('%s') ORDER BY id",
		"csv":     "SELECT id, name FROM read_csv('%s', header=true) ORDER BY id",
		"json":    "SELECT id, name FROM read_json('%s', format='newline_delimited') ORDER BY id",
	}
	for _, inF := range []string{"csv", "json", "parquet"} {
		for _, outF := range []string{"parquet", "csv", "json"} {
			t.Run(inF+"_to_"+outF, func(t *testing.T) {
				out := filepath.Join(t.TempDir(), "out")
				res := execute(t, e, engine.Plan{
					Sources: []engine.Source{{Ctx: "src", Format: inF, Files: []engine.Input{ins[inF]}}},
					Sinks:   []engine.Sink{{Ctx: "snk", Format: outF, Location: out}},
				})
				equal(t, "source rows", res.Sources["src"].Rows, 2)
				equal(t, "sink rows", res.Sinks["snk"].Rows, 2)
				equal(t, "files", paths(res.Sinks["snk"].Files), []string{"data_0." + outF})
				got := query(t, fmt.Sprintf(readers[outF], filepath.Join(out, "data_0."+outF)))
				equal(t, "output", got, []string{"1|a", "2|b"})
			})
		}
	}
}

func TestCompressedInputs(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	csvText := "id,name\n1,a\n2,b\n"
	jsonText := `{"id":1,"name":"a"}` + "\n" + `{"id":2,"name":"b"}` + "\n"
	cases := []struct {
		format string
		in     engine.Input
	}{
		{"csv", input(t, root, "c.csv.gz", gz(t, csvText))},
		{"csv", input(t, root, "c.csv.zst", zst(t, csvText))},
		{"json", input(t, root, "j.json.gz", gz(t, jsonText))},
		{"json", input(t, root, "j.json.zst", zst(t, jsonText))},
		// A cached download whose local name lost the suffix is read by key.
		{"csv", func() engine.Input {
			in := input(t, root, "cache/0001", zst(t, csvText))
			in.Key = "remote/c.csv.zst"
			return in
		}()},
	}
	for _, c := range cases {
		t.Run(c.in.Key, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			res := execute(t, e, engine.Plan{
				Sources: []engine.Source{{Ctx: "src", Format: c.format, Files: []engine.Input{c.in}}},
				Sinks:   []engine.Sink{{Ctx: "snk", Format: "csv", Location: out}},
			})
			equal(t, "rows", res.Sources["src"].Rows, 2)
			equal(t, "schema", schemaString(res.Sources["src"].Schema), "id BIGINT, name VARCHAR")
			got := query(t, fmt.Sprintf("SELECT * FROM read_csv('%s') ORDER BY id", filepath.Join(out, "data_0.csv")))
			equal(t, "output", got, []string{"1|a", "2|b"})
		})
	}
}

func TestHiveColumnsFromKeyOnly(t *testing.T) {
	e := newEngine(t)
	// The source root itself sits under a key=value folder that must not
	// become a column.
	root := filepath.Join(t.TempDir(), "env=prod", "landing")
	files := []engine.Input{
		input(t, root, "year=2024/region=eu/a.csv", []byte("id\n1\n2\n")),
		input(t, root, "year=2024/region=us/b.csv", []byte("id\n3\n")),
		input(t, root, "year=2025/region=eu/sub/c.csv", []byte("id\n4\n")),
	}
	out := filepath.Join(t.TempDir(), "out")
	src := engine.Source{Ctx: "src", Format: "csv", Hive: true, Files: files}
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{src},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	equal(t, "schema", schemaString(res.Sources["src"].Schema), "id BIGINT, region VARCHAR, year BIGINT")
	got := query(t, fmt.Sprintf("SELECT id, year, region FROM read_parquet('%s') ORDER BY id", filepath.Join(out, "data_0.parquet")))
	equal(t, "output", got, []string{"1|2024|eu", "2|2024|eu", "3|2024|us", "4|2025|eu"})

	// Second run with the recorded schema: a value that does not fit the
	// recorded partition type names the file.
	src.Schema = res.Sources["src"].Schema
	src.Files = []engine.Input{input(t, root, "year=next/region=eu/d.csv", []byte("id\n5\n"))}
	_, err := e.Execute(t.Context(), engine.Plan{
		Sources: []engine.Source{src},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out2")}},
	})
	ie := inputError(t, err)
	equal(t, "file", ie.File, "year=next/region=eu/d.csv")
	equal(t, "column", ie.Column, "year")
}

func TestNoHiveLeakWithoutHive(t *testing.T) {
	e := newEngine(t)
	root := filepath.Join(t.TempDir(), "k=v")
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "src", Format: "parquet", Files: []engine.Input{
			writeParquet(t, root, "p=1/x.parquet", "SELECT 1 AS id"),
		}}},
		Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	equal(t, "schema", schemaString(res.Sources["src"].Schema), "id INTEGER")
}

// writeParquet writes the result of q as root/key.
func writeParquet(tb testing.TB, root, key, q string) engine.Input {
	tb.Helper()
	in := input(tb, root, key, nil)
	query(tb, fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet)", q, strings.ReplaceAll(in.Location, "'", "''")))
	in.Size = 1
	return in
}

func TestZeroByteFiles(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{
			{Ctx: "c", Format: "csv", Files: []engine.Input{
				input(t, root, "empty.csv", nil),
				input(t, root, "x.csv", []byte("id\n1\n")),
				input(t, root, "empty2.csv.gz", nil),
			}},
			{Ctx: "p", Format: "parquet", Files: []engine.Input{input(t, root, "empty.parquet", nil)},
				Schema: nil},
			{Ctx: "j", Format: "json", Files: []engine.Input{input(t, root, "e.json", nil)}},
		},
		Sinks: []engine.Sink{{Ctx: "snk", From: "c", Format: "parquet", Location: out}},
	})
	equal(t, "rows c", res.Sources["c"].Rows, 1)
	equal(t, "rows p", res.Sources["p"].Rows, 0)
	equal(t, "rows j", res.Sources["j"].Rows, 0)
}

// TestHiveFormats: partition columns for JSON and Parquet sources too.
func TestHiveFormats(t *testing.T) {
	e := newEngine(t)
	root := filepath.Join(t.TempDir(), "x=1")
	for _, c := range []struct {
		format string
		in     engine.Input
	}{
		{"json", input(t, root, "j/day=2024-01-02/a.json", []byte(`{"id":1}`+"\n"))},
		{"parquet", writeParquet(t, root, "p/day=2024-01-02/a.parquet", "SELECT 1 AS id")},
	} {
		t.Run(c.format, func(t *testing.T) {
			res := execute(t, e, engine.Plan{
				Sources: []engine.Source{{Ctx: "src", Format: c.format, Hive: true, Files: []engine.Input{c.in}}},
				Sinks:   []engine.Sink{{Ctx: "snk", Format: "csv", Location: filepath.Join(t.TempDir(), "out")}},
			})
			schema := schemaString(res.Sources["src"].Schema)
			if schema != "id BIGINT, day DATE" && schema != "id INTEGER, day DATE" {
				t.Errorf("schema = %s, want id and day DATE only", schema)
			}
			equal(t, "rows", res.Sources["src"].Rows, 1)
		})
	}
}

// TestFileColumnNamedLikePartitionFolder: a file column named like its
// key=value folder fails the source, naming the file and the column; one
// of the two values would otherwise be lost.
func TestFileColumnNamedLikePartitionFolder(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	for _, c := range []struct {
		format string
		ok, in engine.Input // ok has no such column; in has it
	}{
		{"csv", input(t, root, "c/region=eu/a.csv", []byte("id,amount\n1,10\n")),
			input(t, root, "c/region=eu/b.csv", []byte("id,REGION,amount\n2,us,20\n"))},
		{"json", input(t, root, "j/region=eu/a.json", []byte(`{"id":1}`+"\n")),
			input(t, root, "j/region=eu/b.json", []byte(`{"id":2,"region":"us"}`+"\n"))},
		{"parquet", writeParquet(t, root, "p/region=eu/a.parquet", "SELECT 1 AS id"),
			writeParquet(t, root, "p/region=eu/b.parquet", "SELECT 2 AS id, 'us' AS region")},
	} {
		t.Run(c.format, func(t *testing.T) {
			plan := func(files ...engine.Input) engine.Plan {
				return engine.Plan{
					Sources: []engine.Source{{Ctx: "src", Format: c.format, Hive: true, Files: files}},
					Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
				}
			}
			_, err := e.Execute(t.Context(), plan(c.ok, c.in))
			ie := inputError(t, err)
			equal(t, "file", ie.File, c.in.Key)
			if !strings.EqualFold(ie.Column, "region") {
				t.Errorf("column = %q, want region", ie.Column)
			}
			// A later run with the recorded schema meets the column too,
			// under every mode that reads new columns.
			res := execute(t, e, plan(c.ok))
			modes := []string{"", bookmark.EvolveAddNewColumns, bookmark.EvolveRescue}
			if c.format == "parquet" {
				modes = append(modes, bookmark.EvolveNone) // CSV and JSON ignore it under none, as any new column
			}
			for _, mode := range modes {
				p := plan(c.in)
				p.Sources[0].Schema = res.Sources["src"].Schema
				p.Sources[0].SchemaEvolution = mode
				_, err = e.Execute(t.Context(), p)
				if err == nil {
					t.Fatalf("schema_evolution %q: a file with a column named like its partition folder was read with the recorded schema", mode)
				}
				t.Logf("recorded schema, schema_evolution %q: %v", mode, err)
			}
		})
	}
}

// TestHiveValuesConvertWithoutLoss: a later run's partition folder whose
// value does not fit the recorded type without loss fails naming the file
// and the column (p=1.5 was read as 2 into a BIGINT column, a time of day
// dropped from a DATE one).
func TestHiveValuesConvertWithoutLoss(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	for _, c := range []struct{ typ, ok, bad string }{
		{"BIGINT", "7", "1.5"},
		{"DATE", "2024-01-02", "2024-01-02T10:00:00"},
		{"TIMESTAMP", "2024-01-02 10:00:00", "2024-01-02 10:00:00+02:00"},
	} {
		t.Run(c.typ, func(t *testing.T) {
			schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "p", Type: c.typ}}
			run := func(value string) error {
				key := "p=" + url.PathEscape(value) + "/a.csv"
				_, err := e.Execute(t.Context(), engine.Plan{
					Sources: []engine.Source{{Ctx: "src", Format: "csv", Hive: true, Schema: schema,
						Files: []engine.Input{input(t, filepath.Join(root, c.typ, value), key, []byte("id\n1\n"))}}},
					Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: filepath.Join(t.TempDir(), "out")}},
				})
				return err
			}
			if err := run(c.ok); err != nil {
				t.Fatalf("p=%s: %v", c.ok, err)
			}
			ie := inputError(t, run(c.bad))
			equal(t, "column", ie.Column, "p")
			t.Log(ie)
		})
	}
	// A first run types the column so that its values fit: DuckDB's
	// detection took this one for a TIMESTAMP, dropping the offset.
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "src", Format: "csv", Hive: true, Files: []engine.Input{
			input(t, filepath.Join(root, "first"), "p="+url.PathEscape("2024-01-01T10:00:00+02:00")+"/a.csv", []byte("id\n1\n"))}}},
		Sinks: []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	equal(t, "schema", schemaString(res.Sources["src"].Schema), "id BIGINT, p VARCHAR")
	got := query(t, fmt.Sprintf("SELECT id, p FROM read_parquet('%s')", filepath.Join(out, "data_0.parquet")))
	equal(t, "output", got, []string{"1|2024-01-01T10:00:00+02:00"})
}
