package sqlite

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/manifest"
)

// TestMigrateTableLoadTarget: migration 3 turns a table sink's output
// location of the release before ("table:" and the sink's settings as JSON
// with Go's field names, PasswordEnv and MergeKeys) into a table load
// whose target keeps every setting, so a roll-forward or purge of a run
// committed before the upgrade connects with the password and merges on
// the keys.
func TestMigrateTableLoadTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := legacyAt(t, path, 2)
	for _, q := range []string{
		`INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, version)
			VALUES ('j', 'r1', 1, 1, 'enable', 'succeeded', 1, 1)`,
		`INSERT INTO bookmark_versions (job, version, run_id, kind, created_at) VALUES ('j', 1, 'r1', 'commit', 1)`,
		`INSERT INTO outputs (job, run_id, sink, root, staged, final, rows, bytes)
			VALUES ('j', 'r1', 'pg', 'table:{"Ctx":"pg","Connection":"postgres://etl@db/shop","PasswordEnv":"SHOP_PW","Table":"public.m","Mode":"merge","MergeKeys":["id","day"]}',
			'stage table', 'public.m', 4, 0)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	outs, err := s.Outputs(t.Context(), "j", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Kind != manifest.TableLoad || outs[0].Table == nil {
		t.Fatalf("outputs: got %+v, want one table load", outs)
	}
	got, want := *outs[0].Table, manifest.Table{Ctx: "pg", Connection: "postgres://etl@db/shop", PasswordEnv: "SHOP_PW",
		Table: "public.m", Mode: "merge", MergeKeys: []string{"id", "day"}}
	if got.Ctx != want.Ctx || got.Connection != want.Connection || got.PasswordEnv != want.PasswordEnv ||
		got.Table != want.Table || got.Mode != want.Mode || !slices.Equal(got.MergeKeys, want.MergeKeys) {
		t.Errorf("migrated target: got %+v, want %+v", got, want)
	}
}
