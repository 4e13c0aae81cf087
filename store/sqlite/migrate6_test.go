package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestMigrateRunsHost: migration 6 keeps the runs an older tidemark wrote,
// with no host recorded, and records the host of runs begun after it.
func TestMigrateRunsHost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := legacyAt(t, path, 5)
	if _, err := db.Exec(`INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version)
		VALUES ('j', 'old', 1, 1, 'enable', 'succeeded', 1, 2, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old, err := s.Run(t.Context(), "j", "old")
	if err != nil {
		t.Fatal(err)
	}
	if old.Host != "" || old.Status != store.StatusSucceeded {
		t.Errorf("run recorded before migrating: got host %q status %s, want no host, succeeded", old.Host, old.Status)
	}
	l, err := s.AcquireLease(t.Context(), "j", store.Holder{ID: "new", Host: "h1:7"}, 60e9)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: "j", RunID: "new", Mode: bookmark.ModeEnable, Host: "h1:7"}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Run(t.Context(), "j", "new"); err != nil || r.Host != "h1:7" {
		t.Errorf("run begun after migrating: got host %q (%v), want h1:7", r.Host, err)
	}
}
