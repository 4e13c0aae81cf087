package files

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// catalogJob is a job whose source reads sales_db.orders_raw, pruned by
// predicate.
func catalogJob(t *testing.T, dir, predicate string) *job.Spec {
	t.Helper()
	spec := &job.Spec{Job: "j", Dir: dir, File: filepath.Join(dir, "job.yaml")}
	cfg := &Config{Catalog: "sales_db.orders_raw", PushDownPredicate: predicate}
	cfg.ApplyDefaults(spec)
	spec.Sources = []job.Source{{Ctx: "orders_source", Kind: "files", Config: cfg}}
	return spec
}

// writeFiles makes files (relative paths) under dir.
func writeFiles(t *testing.T, dir string, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("id\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCatalogSourcePrunes: a catalog source lists only the registered
// partitions that push_down_predicate keeps, reads with the table's
// format and options, and keeps its definition across a new table version
// that only adds columns, but not across a move.
func TestCatalogSourcePrunes(t *testing.T) {
	dir := t.TempDir()
	loc := filepath.Join(dir, "sales")
	writeFiles(t, loc, "year=2025/day=1/a.csv", "year=2026/day=1/a.csv", "year=2026/day=2/a.csv", "year=2026/day=2/b.csv",
		"year=2027/day=1/a.csv", "year=2026/day=3/unregistered.csv", "top.csv")
	st := memory.New(memory.Options{})
	tbl := catalog.Table{Database: "sales_db", Name: "orders_raw", Location: loc, Format: "csv",
		Options:       map[string]string{"header": "true", "delim": "|"},
		Columns:       []catalog.Column{{Name: "id", Type: "BIGINT"}},
		PartitionKeys: []catalog.Column{{Name: "year", Type: "VARCHAR"}, {Name: "day", Type: "INTEGER"}}}
	var parts []catalog.Partition
	for _, v := range [][]string{{"2025", "1"}, {"2026", "1"}, {"2026", "2"}, {"2027", "1"}} {
		parts = append(parts, catalog.Partition{Database: "sales_db", Table: "orders_raw", Values: v,
			Location: filepath.Join(loc, "year="+v[0], "day="+v[1])})
	}
	if err := st.ApplyCatalog(t.Context(), catalog.Changes{Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: tbl}}, Partitions: parts}); err != nil {
		t.Fatal(err)
	}

	plan := func(extra string, prev *bookmark.SourceState) (*Source, *Plan, error) {
		spec := catalogJob(t, dir, extra)
		s, err := Open(t.Context(), spec, spec.Sources[0])
		if err != nil {
			t.Fatal(err)
		}
		in := source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Catalog: st}
		if prev != nil {
			in.Prev, in.HasPrev = *prev, true
		}
		p, err := s.PlanFiles(t.Context(), in)
		return s, p, err
	}
	paths := func(p *Plan) []string {
		var out []string
		for _, f := range p.Take {
			out = append(out, f.Path)
		}
		slices.Sort(out)
		return out
	}

	s, p, err := plan("year >= '2026' AND day < 2 OR (year = '2026' AND day IN (2))", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"year=2026/day=1/a.csv", "year=2026/day=2/a.csv", "year=2026/day=2/b.csv", "year=2027/day=1/a.csv"}
	if got := paths(p); !slices.Equal(got, want) {
		t.Errorf("planned %q, want %q", got, want)
	}
	if s.cfg.Format != "csv" || s.cfg.Options["delim"] != "|" {
		t.Errorf("source reads format %q options %v, want the table's csv with delim |", s.cfg.Format, s.cfg.Options)
	}
	if got := s.catalogSchema(); len(got) != 3 || got[0].Name != "id" || got[2] != (bookmark.Column{Name: "day", Type: "INTEGER"}) {
		t.Errorf("first-run schema = %v, want the table's columns, then its partition keys", got)
	}

	// Without a predicate: every registered partition, not the folder
	// nobody registered, nor files beside the partitions.
	_, p, err = plan("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(p); len(got) != 5 || slices.Contains(got, "year=2026/day=3/unregistered.csv") || slices.Contains(got, "top.csv") {
		t.Errorf("planned %q, want the 5 files of registered partitions", got)
	}
	state := p.NextState(nil)

	// A version that adds a column is the same source.
	v2 := tbl
	v2.Columns = append(slices.Clone(tbl.Columns), catalog.Column{Name: "note", Type: "VARCHAR"})
	if err := st.ApplyCatalog(t.Context(), catalog.Changes{Tables: []catalog.TableChange{{Table: v2, Base: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plan("", &state); err != nil {
		t.Errorf("plan after a version that adds a column: %v, want none", err)
	}
	// A version that moves the table is a change of the source.
	v3 := v2
	v3.Location = filepath.Join(dir, "moved")
	if err := st.ApplyCatalog(t.Context(), catalog.Changes{Tables: []catalog.TableChange{{Table: v3, Base: 2}}}); err != nil {
		t.Fatal(err)
	}
	var ce *source.ChangedError
	if _, _, err := plan("", &state); err == nil || !errors.As(err, &ce) {
		t.Errorf("plan after the table moved: %v, want a *source.ChangedError", err)
	}

	// Bad predicates and unknown tables say what is wrong.
	for _, tc := range []struct{ extra, want string }{
		{"month = '1'", `"month" at offset 0 is not a partition key of the table (partition keys: year, day)`},
	} {
		if _, _, err := plan(tc.extra, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan with %q: %v, want %q", tc.extra, err, tc.want)
		}
	}
	spec := catalogJob(t, dir, "")
	spec.Sources[0].Config.(*Config).Catalog = "sales_db.nope"
	src, _ := Open(t.Context(), spec, spec.Sources[0])
	_, err = src.PlanFiles(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Catalog: st})
	if err == nil || !strings.Contains(err.Error(), "tables of sales_db: orders_raw") {
		t.Errorf("plan of an unknown table: %v, want the tables there named", err)
	}
}

// TestCatalogSourceSkipsNestedSink: another job's sink folder (it holds
// _tidemark/) nested in a registered partition's folder is left out and
// counted, as a path source leaves it out: its output is not this table's
// input.
func TestCatalogSourceSkipsNestedSink(t *testing.T) {
	dir := t.TempDir()
	loc := filepath.Join(dir, "sales")
	writeFiles(t, loc, "day=1/a.csv", "day=1/out/part-r1-0.csv", "day=1/out/_tidemark/owner.json",
		"day=1/out/p=1/part-r1-1.csv", "day=2/a.csv", "day=2/more/b.csv")
	st := memory.New(memory.Options{})
	tbl := catalog.Table{Database: "sales_db", Name: "orders_raw", Location: loc, Format: "csv",
		Options: map[string]string{"header": "true"}, Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}}}
	var parts []catalog.Partition
	for _, d := range []string{"1", "2"} {
		parts = append(parts, catalog.Partition{Database: "sales_db", Table: "orders_raw", Values: []string{d},
			Location: filepath.Join(loc, "day="+d)})
	}
	if err := st.ApplyCatalog(t.Context(), catalog.Changes{Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: tbl}}, Partitions: parts}); err != nil {
		t.Fatal(err)
	}
	spec := catalogJob(t, dir, "")
	s, err := Open(t.Context(), spec, spec.Sources[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PlanFiles(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Catalog: st})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Take {
		got = append(got, f.Path)
	}
	slices.Sort(got)
	if want := []string{"day=1/a.csv", "day=2/a.csv", "day=2/more/b.csv"}; !slices.Equal(got, want) {
		t.Errorf("planned %q, want %q (not the sink's files under day=1/out/)", got, want)
	}
	if s.inSinks != 2 {
		t.Errorf("files counted in sinks: got %d, want 2", s.inSinks)
	}
}

// TestCatalogSourceNestedPartitions: partitions whose folders nest (one
// registered at day=1/, another at day=1/hour=2/, as a hand-made or
// Glue-API registration may) list each file once.
func TestCatalogSourceNestedPartitions(t *testing.T) {
	dir := t.TempDir()
	loc := filepath.Join(dir, "sales")
	writeFiles(t, loc, "day=1/a.csv", "day=1/hour=2/b.csv", "day=2/c.csv")
	st := memory.New(memory.Options{})
	tbl := catalog.Table{Database: "sales_db", Name: "orders_raw", Location: loc, Format: "csv",
		Options: map[string]string{"header": "true"}, Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}}}
	var parts []catalog.Partition
	for _, d := range []string{"day=1", "day=1/hour=2", "day=2"} {
		parts = append(parts, catalog.Partition{Database: "sales_db", Table: "orders_raw", Values: []string{d},
			Location: filepath.Join(loc, filepath.FromSlash(d))})
	}
	if err := st.ApplyCatalog(t.Context(), catalog.Changes{Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: tbl}}, Partitions: parts}); err != nil {
		t.Fatal(err)
	}
	spec := catalogJob(t, dir, "")
	s, err := Open(t.Context(), spec, spec.Sources[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.PlanFiles(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Catalog: st})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Take {
		got = append(got, f.Path)
	}
	if want := []string{"day=1/a.csv", "day=1/hour=2/b.csv", "day=2/c.csv"}; !slices.Equal(got, want) {
		t.Errorf("planned %q, want %q, each once", got, want)
	}
}
