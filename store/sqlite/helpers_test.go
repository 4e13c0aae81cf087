package sqlite

import (
	"database/sql"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

const leaseTTL = time.Hour

// commitFiles begins run id and commits it at base with one file per path.
func commitFiles(t *testing.T, s *Store, l store.Lease, id string, base int64, paths ...string) store.Head {
	t.Helper()
	r, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: l.Job, RunID: id, Mode: bookmark.ModeEnable})
	if err != nil {
		t.Fatal(err)
	}
	c := store.Commit{
		Job: l.Job, Token: l.Token, BaseVersion: base, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Fingerprint: "fp", Files: int64(len(paths))}},
	}
	for _, p := range paths {
		c.Added = append(c.Added, store.FileRecord{Ctx: "src", File: bookmark.File{Path: p, Size: 1, MTime: 1}})
	}
	h, err := s.Commit(t.Context(), c)
	if err != nil {
		t.Fatalf("committing %s: %v", id, err)
	}
	return h
}

// paths lists the current paths of job's ctx "src".
func paths(t *testing.T, s *Store, job string) []string {
	t.Helper()
	var out []string
	for f, err := range s.Files(t.Context(), job, "src") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.Path)
	}
	return out
}

// legacyAt makes a relational state file at schema version v, as a
// tidemark before the objects format wrote it, and returns its database
// (closed when the test ends; closing it earlier is fine).
func legacyAt(t *testing.T, path string, v int) *sql.DB {
	t.Helper()
	saved := migrations
	migrations = saved[:v]
	defer func() { migrations = saved }()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := migrate(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	return db
}

// legacyJob makes a relational state file at the last relational version
// holding job j: run r1 committed files a and b of source src at version
// 1, its lease released. It returns the store's id.
func legacyJob(t *testing.T, path string) string {
	t.Helper()
	ctx := t.Context()
	db := legacyAt(t, path, len(migrations))
	defer db.Close()
	old := newLegacy(db, path)
	l, err := old.AcquireLease(ctx, "j", store.Holder{ID: "old"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	r, err := old.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r1", Mode: bookmark.ModeEnable})
	if err != nil {
		t.Fatal(err)
	}
	c := store.Commit{Job: "j", Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Fingerprint: "fp", Files: 2}},
		Added: []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: "a", Size: 1, MTime: 1}},
			{Ctx: "src", File: bookmark.File{Path: "b", Size: 2, MTime: 2}}}}
	if _, err := old.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := old.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	id, err := old.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return id.ID
}
