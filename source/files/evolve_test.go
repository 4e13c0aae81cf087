package files

import (
	"context"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
)

// TestSchemaEvolutionNeedsTheEngine: a mode other than fail is handed to
// an engine that reads it, and refused by one that does not.
func TestSchemaEvolutionNeedsTheEngine(t *testing.T) {
	hive := false
	dir := t.TempDir()
	plan := func(mode string) *Plan {
		objs, err := objstore.Open(context.Background(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &Plan{Ctx: "s", src: &Source{objs: objs, location: dir,
			cfg: &Config{Path: dir, Format: "csv", HivePartitioning: &hive, SchemaEvolution: mode}}}
	}
	env := source.Env{Log: discard, TempDir: func() (string, error) { return t.TempDir(), nil }}
	if _, err := plan(bookmark.EvolveRescue).Open(context.Background(), env); err == nil || !strings.Contains(err.Error(), "schema_evolution: rescue is not supported by this engine") {
		t.Errorf("rescue on an engine without it: got %v, want a refusal", err)
	}
	if _, err := plan(bookmark.EvolveFail).Open(context.Background(), env); err != nil {
		t.Errorf("fail on an engine without schema evolution: %v", err)
	}
	env.Caps = engine.Caps{Read: []string{"file"}, SchemaEvolution: true}
	rd, err := plan(bookmark.EvolveAddNewColumns).Open(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if got := rd.Input().SchemaEvolution; got != bookmark.EvolveAddNewColumns {
		t.Errorf("engine source's SchemaEvolution: got %q, want add_new_columns", got)
	}
}

// TestAdvanceKeepsSchemaVersions: under a mode other than fail, each run
// that changes the schema adds a version; under fail none are kept.
func TestAdvanceKeepsSchemaVersions(t *testing.T) {
	v1 := []bookmark.Column{{Name: "id", Type: "BIGINT"}}
	v2 := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "coupon", Type: "VARCHAR"}}
	advance := func(mode string, prev bookmark.SourceState, schema []bookmark.Column) bookmark.SourceState {
		hive := false
		p := &Plan{Ctx: "s", prev: prev, hasPrev: prev.Kind != "", Take: []bookmark.File{{Path: "a.csv", Size: 3}},
			src: &Source{cfg: &Config{Tracking: "exact", SchemaEvolution: mode, HivePartitioning: &hive}}}
		a, _ := p.Advance("run-"+mode, engine.SourceResult{Schema: schema})
		return a.State
	}
	first := advance(bookmark.EvolveAddNewColumns, bookmark.SourceState{}, v1)
	if len(first.SchemaVersions) != 1 {
		t.Fatalf("first run: got versions %+v, want 1", first.SchemaVersions)
	}
	next := advance(bookmark.EvolveAddNewColumns, first, v2)
	if len(next.SchemaVersions) != 2 || next.SchemaVersions[1].Added[0] != "coupon" {
		t.Errorf("second run: got versions %+v", next.SchemaVersions)
	}
	if got := advance(bookmark.EvolveFail, bookmark.SourceState{}, v1).SchemaVersions; got != nil {
		t.Errorf("under fail: got versions %+v, want none", got)
	}
}
