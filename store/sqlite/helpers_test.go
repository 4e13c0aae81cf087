package sqlite

import (
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
