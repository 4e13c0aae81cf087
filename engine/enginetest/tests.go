package enginetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// ordersRows is the content every format test reads.
var ordersRows = []string{"id,name", "1,a", "2,b", "3,c"}

// ordersIn writes the orders in format f.
func ordersIn(t *testing.T, f string) engine.Input {
	t.Helper()
	root := t.TempDir()
	switch f {
	case "csv":
		return input(t, root, "orders.csv", []byte("id,name\n1,a\n2,b\n3,c\n"))
	case "json":
		return input(t, root, "orders.json", []byte(`{"id":1,"name":"a"}`+"\n"+`{"id":2,"name":"b"}`+"\n"+`{"id":3,"name":"c"}`+"\n"))
	}
	t.Fatalf("no orders in %s", f)
	return engine.Input{}
}

// testFormats reads CSV and JSON, writes each format, and reads the
// Parquet it wrote back: every path gives the same rows.
func (s *suite) testFormats(t *testing.T) {
	e := s.engine(t)
	for _, in := range []string{"csv", "json"} {
		for _, out := range []string{"csv", "json", "parquet"} {
			t.Run(in+"_to_"+out, func(t *testing.T) {
				snk := sink(t, "out", "orders", out)
				res := execute(t, e, engine.Plan{
					Sources: []engine.Source{{Ctx: "orders", Format: in, Files: []engine.Input{ordersIn(t, in)}}},
					Sinks:   []engine.Sink{snk},
				})
				equal(t, "source rows", res.Sources["orders"].Rows, 3)
				equal(t, "sink rows", res.Sinks["out"].Rows, 3)
				checkStaged(t, snk, res.Sinks["out"])
				equalRows(t, "rows read back", readBack(t, e, snk, res.Sinks["out"]), ordersRows)
				schema := fmt.Sprint(res.Sources["orders"].Schema)
				equal(t, "schema", schema, "[{id BIGINT} {name VARCHAR}]")
			})
		}
	}
}

// testCompressed reads .gz and .zst inputs by their keys' suffixes.
func (s *suite) testCompressed(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	body := "id,name\n1,a\n2,b\n"
	snk := sink(t, "out", "c", "csv")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "c", Format: "csv", Files: []engine.Input{
			input(t, root, "a.csv.gz", gzipped(t, body)),
			input(t, root, "b.csv.zst", zstded(t, "id,name\n3,c\n")),
			input(t, root, "j.csv", []byte(body)),
		}}},
		Sinks: []engine.Sink{snk},
	})
	equal(t, "source rows", res.Sources["c"].Rows, 5)
	equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), []string{"id,name", "1,a", "1,a", "2,b", "2,b", "3,c"})

	jsonSnk := sink(t, "out", "j", "csv")
	res = execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "j", Format: "json", Files: []engine.Input{
			input(t, root, "a.json.gz", gzipped(t, `{"id":1}`+"\n")),
			input(t, root, "b.json.zst", zstded(t, `{"id":2}`+"\n")),
		}}},
		Sinks: []engine.Sink{jsonSnk},
	})
	equalRows(t, "json rows", csvRows(t, jsonSnk, res.Sinks["out"]), []string{"id", "1", "2"})
}

// testHive turns key=value folders into columns, typed from the values.
func (s *suite) testHive(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	snk := sink(t, "out", "h", "csv")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "h", Format: "csv", Hive: true, Files: []engine.Input{
			input(t, root, "year=2023/a.csv", []byte("id\n1\n")),
			input(t, root, "year=2024/b.csv", []byte("id\n2\n3\n")),
		}}},
		Sinks: []engine.Sink{snk},
	})
	equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), []string{"id,year", "1,2023", "2,2024", "3,2024"})
	equal(t, "schema", fmt.Sprint(res.Sources["h"].Schema), "[{id BIGINT} {year BIGINT}]")

	// A first run types partition columns without changing a value: 007
	// stays 007 (not 7), 1.50 stays 1.50, 1e3 stays 1e3, a date beside a
	// timestamp stays as written; plain integers and dates are typed.
	for name, c := range map[string]struct {
		values []string
		typ    string
		want   []string
	}{
		"leading_zero":      {[]string{"007", "7"}, "VARCHAR", []string{"007", "7"}},
		"fraction":          {[]string{"1.50", "7"}, "VARCHAR", []string{"1.50", "7"}},
		"exponent":          {[]string{"1e3"}, "VARCHAR", []string{"1e3"}},
		"integers":          {[]string{"7", "-5"}, "BIGINT", []string{"-5", "7"}},
		"dates":             {[]string{"2024-01-01", "2024-01-02"}, "DATE", []string{"2024-01-01", "2024-01-02"}},
		"date_and_datetime": {[]string{"2024-01-01", "2024-01-02 10:00:00"}, "VARCHAR", []string{"2024-01-01", "2024-01-02 10:00:00"}},
		"beyond_bigint":     {[]string{"99999999999999999999"}, "VARCHAR", []string{"99999999999999999999"}},
	} {
		t.Run("partition_type_"+name, func(t *testing.T) {
			dir := t.TempDir()
			src := engine.Source{Ctx: "h", Format: "csv", Hive: true}
			for i, v := range c.values {
				src.Files = append(src.Files, input(t, dir, fmt.Sprintf("p=%s/%d.csv", url.PathEscape(v), i), []byte("id\n1\n")))
			}
			snk := sink(t, "out", "h", "csv")
			res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{snk}})
			equal(t, "schema", fmt.Sprint(res.Sources["h"].Schema), "[{id BIGINT} {p "+c.typ+"}]")
			want := []string{"id,p"}
			for _, v := range c.want {
				want = append(want, "1,"+v)
			}
			equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), want)
		})
	}

	// Files under different key=value folders (one under none, or under
	// other keys) fail the source naming a file: a reader that took one
	// kind's folders would read the other kind's rows without them, or
	// not at all.
	for name, keys := range map[string][]string{
		"beside_a_partition": {"year=2023/a.csv", "b.csv"},
		"other_keys":         {"year=2023/a.csv", "year=2023/month=1/b.csv"},
		"sibling_keys":       {"a=1/b=2/a.csv", "a=1/c=3/b.csv"},
	} {
		t.Run("folders_differ_"+name, func(t *testing.T) {
			dir := t.TempDir()
			src := engine.Source{Ctx: "h", Format: "csv", Hive: true, Files: []engine.Input{
				input(t, dir, keys[0], []byte("id\n1\n")),
				input(t, dir, keys[1], []byte("id\n2\n")),
			}}
			_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", "h", "csv")}})
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got error %v, want an *engine.InputError naming %s", err, keys[1])
			}
			equal(t, "file", ie.File, keys[1])
		})
	}

	// A folder named k=v=w fails naming the file, the folder and what is
	// wrong with it: readers split it differently, and Hive writes '=' in
	// a value as %3D.
	t.Run("folder_with_two_equals", func(t *testing.T) {
		dir := t.TempDir()
		src := engine.Source{Ctx: "h", Format: "csv", Hive: true, Files: []engine.Input{
			input(t, dir, "k=v=w/a.csv", []byte("id\n1\n")),
		}}
		_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", "h", "csv")}})
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("got error %v, want an *engine.InputError naming k=v=w/a.csv", err)
		}
		equal(t, "file", ie.File, "k=v=w/a.csv")
		if !strings.Contains(ie.Msg, `"k=v=w"`) || !strings.Contains(ie.Msg, "more than one '='") {
			t.Errorf("got %q, want the folder k=v=w named and its second '=' said", ie.Msg)
		}
	})
}

// testSchema applies a recorded schema instead of inferring one, in the
// canonical texts and in DuckDB spellings older states hold.
func (s *suite) testSchema(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	in := input(t, root, "a.csv", []byte("id,amount,at\n1,2.5,2024-05-01 10:00:00+00\n"))
	run := func(schema []bookmark.Column) engine.SourceResult {
		t.Helper()
		return execute(t, e, engine.Plan{
			Sources: []engine.Source{{Ctx: "a", Format: "csv", Files: []engine.Input{in}, Schema: schema}},
			Sinks:   []engine.Sink{sink(t, "out", "a", "parquet")},
		}).Sources["a"]
	}
	inferred := run(nil)
	equal(t, "inferred id", inferred.Schema[0], bookmark.Column{Name: "id", Type: "BIGINT"})
	equal(t, "inferred amount", inferred.Schema[1], bookmark.Column{Name: "amount", Type: "DOUBLE"})
	for _, at := range []string{"TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ"} {
		recorded := []bookmark.Column{{Name: "id", Type: "VARCHAR"}, {Name: "amount", Type: "DECIMAL(10,2)"}, {Name: "at", Type: at}}
		got := run(recorded)
		want := "[{id VARCHAR} {amount DECIMAL(10,2)} {at TIMESTAMP WITH TIME ZONE}]"
		equal(t, "applied schema "+at, fmt.Sprint(got.Schema), want)
	}
	// A nested type in the neutral spelling.
	jin := input(t, root, "n.json", []byte(`{"tags":[1,2],"p":{"x":1.5}}`+"\n"))
	recorded := []bookmark.Column{{Name: "tags", Type: "ARRAY<BIGINT>"}, {Name: "p", Type: "STRUCT<x: DOUBLE>"}}
	got := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "n", Format: "json", Files: []engine.Input{jin}, Schema: recorded}},
		Sinks:   []engine.Sink{sink(t, "out", "n", "parquet")},
	}).Sources["n"]
	equal(t, "nested schema", fmt.Sprint(got.Schema), fmt.Sprint(recorded))
	inferredNested := execute(t, e, engine.Plan{
		Sources: []engine.Source{{Ctx: "n", Format: "json", Files: []engine.Input{jin}}},
		Sinks:   []engine.Sink{sink(t, "out", "n", "parquet")},
	}).Sources["n"]
	equal(t, "inferred nested schema", fmt.Sprint(inferredNested.Schema), fmt.Sprint(recorded))
}

// testNothingDropped: under schema_evolution fail (the default, and the
// only mode an engine without Caps.SchemaEvolution reads), a JSON key the
// schema lacks fails the source, naming file and key, on a run with a
// recorded schema and on a first run whose key is outside what inference
// sampled; and a file column named like its key=value folder fails it in
// every format. A read that kept one of the two values, or ignored the
// key, would change data without a word.
func (s *suite) testNothingDropped(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	fail := func(t *testing.T, src engine.Source, file, column string) {
		t.Helper()
		_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", src.Ctx, "csv")}})
		var ie *engine.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("got error %v, want an *engine.InputError naming %s", err, file)
		}
		equal(t, "file", ie.File, file)
		if column != "" {
			equal(t, "column", strings.ToLower(ie.Column), column)
		}
	}
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "DOUBLE"}}
	t.Run("new_json_key", func(t *testing.T) {
		fail(t, engine.Source{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{
			input(t, root, "mon.json", []byte(`{"id":1,"amount":2.5}`+"\n")),
			input(t, root, "thu.json", []byte(`{"id":2,"amount":3}`+"\n"+`{"id":3,"amount":1,"coupon":"X"}`+"\n")),
		}}, "thu.json", "coupon")
	})
	t.Run("json_key_outside_the_sample", func(t *testing.T) {
		var files []engine.Input
		for i := range 40 {
			files = append(files, input(t, root, fmt.Sprintf("s/%02d.json", i), []byte(`{"id":1,"amount":2.5}`+"\n")))
		}
		// Inference samples 32 of 40 files spread over the list: the
		// fifth is not one of them.
		files[4] = input(t, root, "s/04.json", []byte(`{"id":1,"amount":2.5,"coupon":"X"}`+"\n"))
		fail(t, engine.Source{Ctx: "j", Format: "json", Files: files}, "s/04.json", "coupon")
	})
	t.Run("json_line_not_an_object", func(t *testing.T) {
		// One column: DuckDB read a bare value as that column's value.
		one := []bookmark.Column{{Name: "id", Type: "BIGINT"}}
		for _, schema := range [][]bookmark.Column{nil, one} {
			for _, line := range []string{"7", `[{"id":2},{"id":3}]`} {
				f := input(t, root, "bare.json", []byte(`{"id":1}`+"\n"+line+"\n"))
				fail(t, engine.Source{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{f}}, "bare.json", "")
			}
		}
	})
	t.Run("json_object_after_whitespace", func(t *testing.T) {
		// JSON allows tabs and spaces before an object, and a line of
		// them alone is blank: both are read, not taken for a line that
		// is not an object.
		f := input(t, root, "indented.json", []byte(`{"id":1}`+"\n\t"+`{"id":2}`+"\n \t \n"+`{"id":3}`+"\n"))
		for _, schema := range [][]bookmark.Column{nil, {{Name: "id", Type: "BIGINT"}}} {
			snk := sink(t, "out", "j", "csv")
			res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{f}}}, Sinks: []engine.Sink{snk}})
			equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), []string{"id", "1", "2", "3"})
		}
	})
	t.Run("json_key_in_another_case", func(t *testing.T) {
		// A key spelled Amount where the schema has amount (a producer
		// that changed its casing; both spellings on a first run): the
		// value is read into amount, or the source fails naming the file
		// and the key. DuckDB's JSON reader matches keys exactly, so it
		// read NULL for every such row, under every mode but none.
		recorded := engine.Source{Ctx: "j", Format: "json", Schema: schema, Files: []engine.Input{
			input(t, root, "k/mon.json", []byte(`{"id":1,"amount":2.5}`+"\n")),
			input(t, root, "k/thu.json", []byte(`{"id":2,"Amount":20}`+"\n")),
		}}
		first := engine.Source{Ctx: "j", Format: "json", Files: []engine.Input{
			input(t, root, "k1/mon.json", []byte(`{"id":1,"amount":2.5}`+"\n"+`{"id":2,"Amount":20}`+"\n")),
		}}
		modes := []string{bookmark.EvolveFail}
		if e.Capabilities().SchemaEvolution {
			modes = append(modes, bookmark.EvolveAddNewColumns, bookmark.EvolveRescue)
		}
		for _, c := range []struct {
			name string
			src  engine.Source
			file string
		}{{"recorded", recorded, "k/thu.json"}, {"first_run", first, "k1/mon.json"}} {
			for _, mode := range modes {
				t.Run(c.name+"/"+mode, func(t *testing.T) {
					src := c.src
					src.SchemaEvolution = mode
					snk := sink(t, "out", src.Ctx, "csv")
					res, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{snk}})
					if err != nil {
						var ie *engine.InputError
						if !errors.As(err, &ie) {
							t.Fatalf("got error %v, want the value read or an *engine.InputError naming %s", err, c.file)
						}
						equal(t, "file", ie.File, c.file)
						equal(t, "column", ie.Column, "Amount")
						return
					}
					rows := csvRows(t, snk, res.Sinks["out"])
					if !slices.ContainsFunc(rows, func(r string) bool { return strings.HasPrefix(r, "2,20") }) {
						t.Errorf("got rows %q: the value 20 of key Amount was lost", rows)
					}
				})
			}
		}
	})
	t.Run("partition_value_does_not_fit", func(t *testing.T) {
		// A later run's folder value that the recorded type holds only with
		// loss: p=1.5 was read as 2, a time of day dropped from a date.
		for _, c := range []struct{ typ, bad string }{
			{"BIGINT", "1.5"},
			{"DATE", "2024-01-02T10:00:00"},
			{"TIMESTAMP", "2024-01-02 10:00:00+02:00"},
		} {
			key := "pv-" + c.typ + "/p=" + url.PathEscape(c.bad) + "/a.csv"
			recorded := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "p", Type: c.typ}}
			fail(t, engine.Source{Ctx: "h", Format: "csv", Hive: true, Schema: recorded,
				Files: []engine.Input{input(t, root, key, []byte("id\n1\n"))}}, key, "p")
		}
	})
	t.Run("column_named_like_partition", func(t *testing.T) {
		pq := s.parquetIn(t, e, "x.parquet", "id,region\n1,us\n")
		src, err := engine.LocalPath(pq.Location)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			format, key, column string
			content             []byte
		}{
			{"csv", "c/region=eu/a.csv", "region", []byte("id,region\n1,us\n")},
			{"json", "j/region=eu/a.json", "region", []byte(`{"id":1,"region":"us"}` + "\n")},
			{"parquet", "p/region=eu/a.parquet", "region", data},
		} {
			files := []engine.Input{input(t, root, c.key, c.content)}
			t.Run(c.format+"/first_run", func(t *testing.T) {
				fail(t, engine.Source{Ctx: "h", Format: c.format, Hive: true, Files: files}, c.key, c.column)
			})
			t.Run(c.format+"/recorded", func(t *testing.T) {
				recorded := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "region", Type: "VARCHAR"}}
				fail(t, engine.Source{Ctx: "h", Format: c.format, Hive: true, Files: files, Schema: recorded}, c.key, "")
			})
		}
	})
}

// testTransforms defines transforms over two sources and over an earlier
// transform; sources read only through transforms are still counted.
func (s *suite) testTransforms(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	snk := sink(t, "out", "", "csv") // default from: the last transform
	raw := sink(t, "raw", "joined", "csv")
	res := execute(t, e, engine.Plan{
		Sources: []engine.Source{
			{Ctx: "orders", Format: "csv", Files: []engine.Input{input(t, root, "o.csv", []byte("id,cust\n1,10\n2,20\n3,10\n"))}},
			{Ctx: "custs", Format: "json", Files: []engine.Input{input(t, root, "c.json", []byte(`{"cust":10,"name":"x"}`+"\n"+`{"cust":20,"name":"y"}`+"\n"))}},
		},
		Transforms: []engine.Transform{
			{Name: "joined", SQL: "SELECT o.id, c.name FROM orders o JOIN custs c ON o.cust = c.cust"},
			{Name: "per_name", SQL: "SELECT name, count(*) AS n FROM joined GROUP BY name;"},
		},
		Sinks: []engine.Sink{snk, raw},
	})
	equal(t, "orders rows", res.Sources["orders"].Rows, 3)
	equal(t, "custs rows", res.Sources["custs"].Rows, 2)
	equalRows(t, "per_name", csvRows(t, snk, res.Sinks["out"]), []string{"name,n", "x,2", "y,1"})
	equalRows(t, "joined", csvRows(t, raw, res.Sinks["raw"]), []string{"id,name", "1,x", "2,y", "3,x"})
	equal(t, "sink rows", res.Sinks["raw"].Rows, 3)
}

// testPartitioned writes one key=value folder per partition value, in
// every output format.
func (s *suite) testPartitioned(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	in := input(t, root, "s.csv", []byte("id,product\n1,x\n2,y\n3,x\n"))
	for _, format := range []string{"parquet", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			snk := sink(t, "out", "s", format)
			snk.PartitionBy = []string{"product"}
			res := execute(t, e, engine.Plan{
				Sources: []engine.Source{{Ctx: "s", Format: "csv", Files: []engine.Input{in}}},
				Sinks:   []engine.Sink{snk},
			})
			checkStaged(t, snk, res.Sinks["out"])
			rows := map[string]int64{}
			for _, f := range res.Sinks["out"].Files {
				rows[strings.SplitN(f.Path, "/", 2)[0]] += f.Rows
			}
			equal(t, "partitions", fmt.Sprint(rows), "map[product=x:2 product=y:1]")
			equalRows(t, "rows read back", readBack(t, e, snk, res.Sinks["out"]), []string{"id,product", "1,x", "2,y", "3,x"})
		})
	}
}

// testSplit writes a sink as several files when asked to.
func (s *suite) testSplit(t *testing.T) {
	if s.c.SplitOptions == nil {
		t.Skip("no SplitOptions")
	}
	e := s.engine(t)
	var b strings.Builder
	b.WriteString("id,text\n")
	x := uint64(1)
	for i := range 30000 {
		x = x*6364136223846793005 + 1442695040888963407 // incompressible text
		fmt.Fprintf(&b, "%d,%016x%016x\n", i, x, x*31)
	}
	in := input(t, t.TempDir(), "big.csv", []byte(b.String()))
	for _, format := range []string{"parquet", "csv"} {
		t.Run(format, func(t *testing.T) {
			snk := sink(t, "out", "big", format)
			snk.Options = s.c.SplitOptions(format)
			res := execute(t, e, engine.Plan{
				Sources: []engine.Source{{Ctx: "big", Format: "csv", Files: []engine.Input{in}}},
				Sinks:   []engine.Sink{snk},
			})
			if n := len(res.Sinks["out"].Files); n < 2 {
				t.Errorf("got %d files, want several", n)
			}
			equal(t, "rows", res.Sinks["out"].Rows, 30000)
			checkStaged(t, snk, res.Sinks["out"])
		})
	}
}

// testBadRecords: fail names file and line; skip drops and counts the bad
// rows; quarantine also writes them under Rejects/<source>.
func (s *suite) testBadRecords(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}}
	src := engine.Source{Ctx: "orders", Format: "csv", Schema: schema, Files: []engine.Input{
		input(t, root, "good.csv", []byte("id,name\n1,a\n2,b\n")),
		input(t, root, "sub/bad.csv", []byte("id,name\n3,c\nnope,d\n4,e\n")),
	}}
	jsrc := engine.Source{Ctx: "orders", Format: "json", Schema: schema, Files: []engine.Input{
		input(t, root, "good.json", []byte(`{"id":1,"name":"a"}`+"\n")),
		input(t, root, "sub/bad.json", []byte(`{"id":3,"name":"c"}`+"\n"+`{"id":`+"\n")),
	}}
	for _, src := range []engine.Source{src, jsrc} {
		t.Run(src.Format, func(t *testing.T) {
			_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", "orders", "parquet")}})
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("fail: got error %v, want an *engine.InputError", err)
			}
			equal(t, "file", ie.File, "sub/bad."+src.Format)
			equal(t, "line", ie.Line, map[string]int64{"csv": 3, "json": 2}[src.Format])
			equal(t, "source", ie.Source, "orders")

			good := int64(3)
			if src.Format == "json" {
				good = 2
			}
			res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, OnBadRecord: engine.BadSkip,
				Sinks: []engine.Sink{sink(t, "out", "orders", "parquet")}})
			equal(t, "skip: rows", res.Sources["orders"].Rows, good+map[string]int64{"csv": 1, "json": 0}[src.Format])
			equal(t, "skip: rejected", res.Sources["orders"].Rejected, 1)

			rejects := filepath.Join(t.TempDir(), "rejects")
			res = execute(t, e, engine.Plan{Sources: []engine.Source{src}, OnBadRecord: engine.BadQuarantine, Rejects: fileURL(rejects),
				Sinks: []engine.Sink{sink(t, "out", "orders", "parquet")}})
			equal(t, "quarantine: rejected", res.Sources["orders"].Rejected, 1)
			entries, err := os.ReadDir(filepath.Join(rejects, "orders"))
			if err != nil || len(entries) == 0 {
				t.Fatalf("quarantine: got %v (%v) under rejects/orders, want the rejected rows", entries, err)
			}
			data, err := os.ReadFile(filepath.Join(rejects, "orders", entries[0].Name()))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "sub/bad."+src.Format) {
				t.Errorf("quarantine: rejects %q do not name the file sub/bad.%s", data, src.Format)
			}
		})
	}
}

// testBadValueInAnyColumn: a value that does not fit its column is a
// bad record of its row whichever columns the job reads: the row is named
// by file and line (fail), and left out and counted (skip, quarantine) by
// a sink of every column and by one of another column alike. A reader
// that converts only the columns a query needs would keep the row in one
// and drop it uncounted in the other.
func (s *suite) testBadValueInAnyColumn(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "BIGINT"}}
	files := map[string][]byte{
		"csv":  []byte("id,v\n1,5\n2,1.5\n3,7\n"),
		"json": []byte(`{"id":1,"v":5}` + "\n" + `{"id":2,"v":1.5}` + "\n" + `{"id":3,"v":7}` + "\n"),
	}
	for _, f := range []string{"csv", "json"} {
		t.Run(f, func(t *testing.T) {
			src := engine.Source{Ctx: "orders", Format: f, Schema: schema, Files: []engine.Input{input(t, root, "late."+f, files[f])}}
			line := map[string]int64{"csv": 3, "json": 2}[f]
			_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", "orders", "csv")}})
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("fail: got error %v, want an *engine.InputError", err)
			}
			equal(t, "fail: file", ie.File, "late."+f)
			equal(t, "fail: line", ie.Line, line)

			for _, pol := range []string{engine.BadSkip, engine.BadQuarantine} {
				rejects := filepath.Join(t.TempDir(), "rejects")
				all := sink(t, "all", "orders", "csv")
				ids := sink(t, "ids", "ids", "csv")
				res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, OnBadRecord: pol, Rejects: fileURL(rejects),
					Transforms: []engine.Transform{{Name: "ids", SQL: "SELECT id FROM orders"}},
					Sinks:      []engine.Sink{all, ids}})
				equal(t, pol+": rejected", res.Sources["orders"].Rejected, 1)
				equalRows(t, pol+": every column", csvRows(t, all, res.Sinks["all"]), []string{"id,v", "1,5", "3,7"})
				equalRows(t, pol+": id alone", csvRows(t, ids, res.Sinks["ids"]), []string{"id", "1", "3"})
				if pol != engine.BadQuarantine {
					continue
				}
				entries, err := os.ReadDir(filepath.Join(rejects, "orders"))
				if err != nil || len(entries) == 0 {
					t.Fatalf("quarantine: got %v (%v) under rejects/orders, want the rejected row", entries, err)
				}
				data, err := os.ReadFile(filepath.Join(rejects, "orders", entries[0].Name()))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(data), "1.5") {
					t.Errorf("quarantine: rejects %q do not hold the row with 1.5", data)
				}
			}
		})
	}
}

// testDoubleOutOfRange: under the fail policy a number past a DOUBLE's or
// FLOAT's range (1e400) is a bad record naming file and line, not
// infinity with exit 0; an infinity spelled out in CSV stays one.
func (s *suite) testDoubleOutOfRange(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "DOUBLE"}, {Name: "f", Type: "FLOAT"}}
	files := map[string][]byte{
		"csv":  []byte("id,v,f\n1,1.5,1\n2,1e400,1\n3,-Infinity,1\n4,1,-1e39\n"),
		"json": []byte(`{"id":1,"v":1.5,"f":1}` + "\n" + `{"id":2,"v":-1e400,"f":1}` + "\n" + `{"id":4,"v":1,"f":1e39}` + "\n"),
	}
	for _, f := range []string{"csv", "json"} {
		t.Run(f, func(t *testing.T) {
			src := engine.Source{Ctx: "nums", Format: f, Schema: schema, Files: []engine.Input{input(t, root, "n."+f, files[f])}}
			_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", "nums", "csv")}})
			var ie *engine.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("fail: got error %v, want an *engine.InputError", err)
			}
			equal(t, "fail: file", ie.File, "n."+f)
			equal(t, "fail: line", ie.Line, map[string]int64{"csv": 3, "json": 2}[f])

			// Without the bad rows, an infinity spelled out is read.
			src.Files = []engine.Input{input(t, root, "ok."+f, []byte(map[string]string{"csv": "id,v,f\n1,1.5,1\n3,-Infinity,1\n",
				"json": `{"id":1,"v":1.5,"f":1}` + "\n"}[f]))}
			all := sink(t, "all", "nums", "csv")
			res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{all}})
			want := map[string][]string{"csv": {"id,v,f", "1,1.5,1.0", "3,-inf,1.0"}, "json": {"id,v,f", "1,1.5,1.0"}}[f]
			got := csvRows(t, all, res.Sinks["all"])
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], "Infinity", "inf") // the CSV writers' spellings
			}
			equalRows(t, "good rows", got, want)
		})
	}
}

// testJSONNonFinite: NaN and the infinities of DOUBLE and FLOAT columns
// are written to JSON as the strings "NaN", "Infinity" and "-Infinity"
// (bare NaN and Infinity, as written before, are no JSON: strict readers
// refused the files), and read back through a JSON source with the
// recorded schema as the same values.
func (s *suite) testJSONNonFinite(t *testing.T) {
	e := s.engine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "DOUBLE"}, {Name: "f", Type: "FLOAT"}}
	in := input(t, t.TempDir(), "n.csv", []byte("id,v,f\n1,NaN,NaN\n2,Infinity,Infinity\n3,-Infinity,-Infinity\n4,1.5,-2.5\n5,,\n"))
	out := sink(t, "out", "nums", "json")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "nums", Format: "csv", Schema: schema, Files: []engine.Input{in}}},
		Sinks: []engine.Sink{out}})
	got := map[string]string{}
	for _, f := range res.Sinks["out"].Files {
		data, err := os.ReadFile(filepath.Join(localDir(t, out), filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var row struct {
				ID   int64
				V, F any
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: line %q is no JSON: %v", f.Path, line, err)
			}
			got[fmt.Sprint(row.ID)] = fmt.Sprintf("%#v %#v", row.V, row.F)
		}
	}
	want := map[string]string{"1": `"NaN" "NaN"`, "2": `"Infinity" "Infinity"`, "3": `"-Infinity" "-Infinity"`,
		"4": "1.5 -2.5", "5": "<nil> <nil>"}
	for id, w := range want {
		equal(t, "row "+id, got[id], w)
	}

	src := engine.Source{Ctx: "back", Format: "json", Schema: schema}
	for _, f := range res.Sinks["out"].Files {
		src.Files = append(src.Files, engine.Input{Location: fileURL(filepath.Join(localDir(t, out), filepath.FromSlash(f.Path))), Key: f.Path, Size: f.Bytes})
	}
	back := sink(t, "back", "back", "parquet")
	r := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{back}})
	equal(t, "read back: rows", r.Sinks["back"].Rows, 5)
	pq := engine.Source{Ctx: "pq", Format: "parquet"}
	for _, f := range r.Sinks["back"].Files {
		pq.Files = append(pq.Files, engine.Input{Location: fileURL(filepath.Join(localDir(t, back), filepath.FromSlash(f.Path))), Key: f.Path, Size: f.Bytes})
	}
	kind := func(c string) string {
		return fmt.Sprintf("CASE WHEN isnan(%[1]s) THEN 'nan' WHEN %[1]s > 1e38 THEN 'inf' WHEN %[1]s < -1e38 THEN '-inf' ELSE CAST(%[1]s AS STRING) END AS %[1]s", c)
	}
	check := sink(t, "check", "kinds", "csv")
	c := execute(t, e, engine.Plan{Sources: []engine.Source{pq}, Sinks: []engine.Sink{check},
		Transforms: []engine.Transform{{Name: "kinds", SQL: "SELECT id, " + kind("v") + ", " + kind("f") + " FROM pq"}}})
	equalRows(t, "read back: values", csvRows(t, check, c.Sinks["check"]), []string{"id,v,f",
		"1,nan,nan", "2,inf,inf", "3,-inf,-inf", "4,1.5,-2.5", "5,,"})
}

// testCSVNonFinite: NaN and the infinities of DOUBLE and FLOAT columns
// are written to CSV as NaN, Infinity and -Infinity on every engine, which
// every engine reads back (the DuckDB engine wrote nan, inf and -inf,
// which Spark's CSV reader refuses).
func (s *suite) testCSVNonFinite(t *testing.T) {
	e := s.engine(t)
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "DOUBLE"}, {Name: "f", Type: "FLOAT"}}
	in := input(t, t.TempDir(), "n.csv", []byte("id,v,f\n1,NaN,NaN\n2,Infinity,Infinity\n3,-Infinity,-Infinity\n4,1.5,-2.5\n5,,\n"))
	out := sink(t, "out", "nums", "csv")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "nums", Format: "csv", Schema: schema, Files: []engine.Input{in}}},
		Sinks: []engine.Sink{out}})
	equalRows(t, "written", csvRows(t, out, res.Sinks["out"]), []string{"id,v,f", "1,NaN,NaN", "2,Infinity,Infinity",
		"3,-Infinity,-Infinity", "4,1.5,-2.5", "5,,"})
	src := engine.Source{Ctx: "back", Format: "csv", Schema: schema}
	for _, f := range res.Sinks["out"].Files {
		src.Files = append(src.Files, engine.Input{Location: fileURL(filepath.Join(localDir(t, out), filepath.FromSlash(f.Path))), Key: f.Path, Size: f.Bytes})
	}
	again := sink(t, "again", "back", "csv")
	r := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{again}})
	equalRows(t, "read back", csvRows(t, again, r.Sinks["again"]), []string{"id,v,f", "1,NaN,NaN", "2,Infinity,Infinity",
		"3,-Infinity,-Infinity", "4,1.5,-2.5", "5,,"})
}

// testLocations: plain local paths work like file:// URLs, and a
// location the engine cannot read is an error, not a silent skip.
func (s *suite) testLocations(t *testing.T) {
	e := s.engine(t)
	in := ordersIn(t, "csv")
	local, err := engine.LocalPath(in.Location)
	if err != nil {
		t.Fatal(err)
	}
	in.Location = local
	snk := sink(t, "out", "orders", "csv")
	snk.Location = localDir(t, snk)
	res := execute(t, e, engine.Plan{Sources: []engine.Source{{Ctx: "orders", Format: "csv", Files: []engine.Input{in}}}, Sinks: []engine.Sink{snk}})
	equalRows(t, "rows", csvRows(t, snk, res.Sinks["out"]), ordersRows)

	if !e.Capabilities().Reads("nosuch") {
		bad := in
		bad.Location = "nosuch://bucket/orders.csv"
		if _, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{{Ctx: "orders", Format: "csv", Files: []engine.Input{bad}}},
			Sinks: []engine.Sink{sink(t, "out", "orders", "csv")}}); err == nil {
			t.Errorf("reading a nosuch:// location: got no error, want one")
		}
	}
}
