package duckdb

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

var salesSchema = []bookmark.Column{
	{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}, {Name: "amount", Type: "BIGINT"},
}

// readSorted executes a plan of one CSV source into a Parquet sink and
// returns the sink's rows sorted, "id|name|amount".
func readSorted(t *testing.T, e *Engine, src engine.Source) ([]string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	_, err := e.Execute(context.Background(), engine.Plan{
		Sources: []engine.Source{src},
		Sinks:   []engine.Sink{{Ctx: "snk", Format: "parquet", Location: out}},
	})
	if err != nil {
		return nil, err
	}
	rows := query(t, "SELECT id, name, amount FROM read_parquet("+literal(filepath.Join(out, "*.parquet"))+")")
	slices.Sort(rows)
	return rows, nil
}

// TestCSVColumnsByName: files whose headers list the recorded columns in
// other orders (plain, quoted, another delimiter's worth of spacing, gzip)
// are read by name, on a recorded schema and on a first run alike.
func TestCSVColumnsByName(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	files := []engine.Input{
		input(t, root, "a.csv", []byte("id,name,amount\n1,a,10\n")),
		input(t, root, "b.csv", []byte("amount,name,id\n20,b,2\n")),
		input(t, root, "c.csv", []byte(`"name","id","amount"`+"\r\n"+`c,3,30`+"\r\n")),
		input(t, root, "d.csv.gz", gz(t, "amount,id,name\n40,4,d\n")),
		input(t, root, "e.csv", []byte("ID,Name,AMOUNT\n5,e,50\n")),
		input(t, root, "f.csv", []byte("\uFEFFamount , id,name\n60,6,f\n")),
	}
	want := "[1|a|10 2|b|20 3|c|30 4|d|40 5|e|50 6|f|60]"
	for _, schema := range [][]bookmark.Column{salesSchema, nil} {
		got, err := readSorted(t, e, engine.Source{Ctx: "src", Format: "csv", Files: files, Schema: schema,
			Options: map[string]any{"header": true}})
		if err != nil {
			t.Fatalf("schema %v: %v", schema, err)
		}
		equal(t, "rows read by name", got, want)
	}

	// Headerless files stay positional.
	got, err := readSorted(t, e, engine.Source{Ctx: "src", Format: "csv", Schema: salesSchema,
		Options: map[string]any{"header": false},
		Files:   []engine.Input{input(t, root, "h.csv", []byte("6,f,60\n"))}})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "headerless", got, "[6|f|60]")
}

// TestCSVHeaderMismatch: a header with a column the schema lacks, one
// without a schema column, or other names fails naming file and column.
func TestCSVHeaderMismatch(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	for _, tc := range []struct {
		header, column, says string
	}{
		{"id,name,amount,coupon", "coupon", "not in the source's schema"},
		{"id,name", "amount", "lacks column amount"},
		{"x,y,z", "x", "not in the source's schema"},
		{"id,name,id", "id", "twice"},
	} {
		t.Run(tc.header, func(t *testing.T) {
			good := input(t, root, "good.csv", []byte("id,name,amount\n1,a,10\n"))
			bad := input(t, root, "bad-"+tc.column+".csv", []byte(tc.header+"\n1,2,3,4\n"))
			_, err := readSorted(t, e, engine.Source{Ctx: "src", Format: "csv", Schema: salesSchema,
				Options: map[string]any{"header": true}, Files: []engine.Input{good, bad}})
			ie := inputError(t, err)
			equal(t, "file", ie.File, bad.Key)
			equal(t, "column", ie.Column, tc.column)
			if !strings.Contains(ie.Msg, tc.says) {
				t.Errorf("message %q does not say %q", ie.Msg, tc.says)
			}
		})
	}
}

func TestSplitRecord(t *testing.T) {
	for _, tc := range []struct {
		rec, delim, quote, escape string
		want                      []string
		complete                  bool
	}{
		{"a,b,c", ",", `"`, `"`, []string{"a", "b", "c"}, true},
		{`"a","b ""x""",c`, ",", `"`, `"`, []string{"a", `b "x"`, "c"}, true},
		{`"a\"b";c`, ";", `"`, `\`, []string{`a"b`, "c"}, true},
		{`"a,b`, ",", `"`, `"`, nil, false},
		{`"a"x,b`, ",", `"`, `"`, nil, true},
		{"a||b", "||", `"`, `"`, []string{"a", "b"}, true},
		{"a,,", ",", "", "", []string{"a", "", ""}, true},
	} {
		got, complete := splitRecord(tc.rec, tc.delim, tc.quote, tc.escape)
		if !slices.Equal(got, tc.want) || complete != tc.complete {
			t.Errorf("splitRecord(%q) = %q, %v; want %q, %v", tc.rec, got, complete, tc.want, tc.complete)
		}
	}
}

// BenchmarkReadHeader is the cost per file of reading its header.
func BenchmarkReadHeader(b *testing.B) {
	root := b.TempDir()
	in := input(b, root, "a.csv", []byte("order_id,customer_id,product,amount,ts\n"+strings.Repeat("1,2,widget,3,2024-01-01 00:00:00\n", 10000)))
	d := options{"delim": {name: "delim", value: ","}, "quote": {name: "quote", value: `"`},
		"escape": {name: "escape", value: `"`}, "skip": {name: "skip", value: int64(0)}}
	for b.Loop() {
		if _, err := readHeader(in.Location, d, options{}); err != nil {
			b.Fatal(err)
		}
	}
}
