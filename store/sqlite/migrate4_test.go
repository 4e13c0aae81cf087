package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

// TestMigrateVersionsBy: migration 4 keeps the versions an older tidemark
// wrote, with nobody recorded as having asked, and tells a rewind (a reset
// to a run) from a full reset.
func TestMigrateVersionsBy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := legacyAt(t, path, 3)
	for _, q := range []string{
		`INSERT INTO bookmark_versions (job, version, run_id, kind, created_at) VALUES ('j', 1, 'r1', 'commit', 1)`,
		`INSERT INTO bookmark_versions (job, version, run_id, kind, created_at) VALUES ('j', 2, 'r1', 'reset', 2)`,
		`INSERT INTO bookmark_versions (job, version, run_id, kind, created_at) VALUES ('j', 3, '', 'reset', 3)`,
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
	vs, err := s.Versions(t.Context(), "j", store.VersionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{store.KindReset, store.KindRewind, store.KindCommit}
	if len(vs) != len(want) {
		t.Fatalf("Versions after migrating: got %+v, want 3", vs)
	}
	for i, v := range vs {
		if v.Kind != want[i] || v.By != "" || v.Version != int64(3-i) {
			t.Errorf("version %d after migrating: got %+v, want kind %s and nobody recorded", 3-i, v, want[i])
		}
	}
}
