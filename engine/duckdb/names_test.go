package duckdb

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
)

func TestOddIdentifiers(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	// Paths with a quote, a glob character and a key=value folder.
	files := []engine.Input{
		input(t, root, "it's/a[1].csv", []byte("weird \"col\",Ünïcode name\n1,x\n")),
		input(t, root, "k=v/a1.csv", []byte("weird \"col\",Ünïcode name\n2,y\n")),
	}
	src := `my "odd" source-1`
	tr := "select; drop"
	out := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{
		Sources:    []engine.Source{{Ctx: src, Format: "csv", Files: files}},
		Transforms: []engine.Transform{{Name: tr, SQL: `SELECT "weird ""col""" AS "a'b", "Ünïcode name" FROM "my ""odd"" source-1"`}},
		Sinks: []engine.Sink{
			{Ctx: "out sink", From: tr, Format: "parquet", PartitionBy: []string{"Ünïcode name"}, Location: out},
			{Ctx: "json", From: tr, Format: "json", PartitionBy: []string{"Ünïcode name"}, Location: out + "-json"},
		},
	})
	got := query(t, fmt.Sprintf(`SELECT "a'b" FROM read_json('%s-json/*/*.json') ORDER BY 1`, out))
	equal(t, "json values", got, []string{"1", "2"})
	equal(t, "schema", schemaString(res.Sources[src].Schema), `weird "col" BIGINT, Ünïcode name VARCHAR`)
	equal(t, "rows", res.Sources[src].Rows, 2)
	equal(t, "sink rows", res.Sinks["out sink"].Rows, 2)
	got = query(t, fmt.Sprintf(`SELECT "a'b" FROM read_parquet('%s/*/*.parquet') ORDER BY 1`, out))
	equal(t, "values", got, []string{"1", "2"}) // a[1].csv was read, not a1.csv twice
}

func TestNamesValidated(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	in := input(t, root, "x.csv", []byte("a\n1\n"))
	sink := []engine.Sink{{Ctx: "s", Format: "csv", Location: filepath.Join(t.TempDir(), "o")}}
	cases := []struct {
		plan engine.Plan
		want string
	}{
		{engine.Plan{Sources: []engine.Source{{Ctx: "a/b", Format: "csv", Files: []engine.Input{in}}}, Sinks: sink}, `source name "a/b" contains '/'`},
		{engine.Plan{Sources: []engine.Source{{Ctx: "", Format: "csv"}}, Sinks: sink}, "source name is empty"},
		{engine.Plan{Sources: []engine.Source{{Ctx: "__tidemark_x", Format: "csv"}}, Sinks: sink}, "reserved"},
		{engine.Plan{Sources: []engine.Source{{Ctx: "A", Format: "csv"}, {Ctx: "a", Format: "csv"}}, Sinks: sink}, "already used by source A"},
		{engine.Plan{Sources: []engine.Source{{Ctx: "a", Format: "xml"}}, Sinks: sink}, `format "xml"`},
		{engine.Plan{Sources: []engine.Source{{Ctx: "a", Format: "csv"}}, Sinks: []engine.Sink{{Ctx: "s", From: "nope", Format: "csv", Location: "x"}}}, "from nope is neither"},
		{engine.Plan{OnBadRecord: "quarantine", Sources: []engine.Source{{Ctx: "a", Format: "csv"}}}, "rejects folder"},
	}
	for _, c := range cases {
		_, err := e.Execute(t.Context(), c.plan)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// TestOptionInjection: option values and paths travel as escaped literals;
// option names must be known; values must have the right shape.
func TestOptionInjection(t *testing.T) {
	e := newEngine(t)
	root := t.TempDir()
	canary := filepath.Join(t.TempDir(), "canary")
	evil := fmt.Sprintf("'); COPY (SELECT 1) TO '%s' (FORMAT csv); --", canary)
	in := input(t, root, "x.csv", []byte("a\n1\n"))
	plan := func(opts map[string]any, sinkOpts map[string]any) engine.Plan {
		return engine.Plan{
			Sources: []engine.Source{{Ctx: "src", Format: "csv", Options: opts, Files: []engine.Input{in}}},
			Sinks:   []engine.Sink{{Ctx: "snk", Format: "csv", Options: sinkOpts, Location: filepath.Join(t.TempDir(), "o")}},
		}
	}
	cases := []struct {
		opts, sinkOpts map[string]any
		want           string
	}{
		{map[string]any{"nullstr": evil}, nil, ""}, // escaped: just a strange null string
		{map[string]any{"delim": evil}, nil, "source src"},
		{map[string]any{"dateformat": evil, "header": true}, nil, ""}, // escaped; unused
		{map[string]any{"delim'": ","}, nil, `source src: option "delim'" is not supported for csv`},
		{map[string]any{"columns": "x"}, nil, `option "columns" is not supported`},
		{map[string]any{"header": "maybe"}, nil, "option header: want true or false"},
		{map[string]any{"types": map[string]any{"a": "INT); DROP TABLE x; --"}}, nil, "is not a type name"},
		{nil, map[string]any{"nullstr": evil}, ""},
		{nil, map[string]any{"compression": evil}, "sink snk: option compression: want one of"},
		{nil, map[string]any{"force_quote": []any{evil}}, "sink snk"},
	}
	for i, c := range cases {
		_, err := e.Execute(t.Context(), plan(c.opts, c.sinkOpts))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("case %d: %v", i, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("case %d: got %v, want an error containing %q", i, err, c.want)
		}
		if _, err := os.Stat(canary); err == nil {
			t.Fatalf("case %d: injected statement ran", i)
		}
	}
	if err := ValidateSourceOptions("csv", map[string]any{"Header": true, "sep": ";"}); err != nil {
		t.Errorf("ValidateSourceOptions: %v", err)
	}
	if err := ValidateSinkOptions("parquet", map[string]any{"row_group_size": "x"}); err == nil {
		t.Errorf("ValidateSinkOptions accepted row_group_size x")
	}
}
