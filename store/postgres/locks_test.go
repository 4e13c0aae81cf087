package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestJobsDoNotWaitForEachOther: while a transaction holds job A's head
// object's row (as a write of A's head does while it runs), job B takes its lease, begins,
// commits a run with files, outputs and catalog changes, publishes and
// resets, all at once; only job A's own writes wait. No write locks more
// than its job's rows.
func TestJobsDoNotWaitForEachOther(t *testing.T) {
	db := newDB(t)
	s := db.open(t)
	ctx := t.Context()
	la, err := s.AcquireLease(ctx, "job-a", store.Holder{ID: "a"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	held := db.Hold(t)
	held.Exec(`SELECT 1 FROM ` + s.schema + `.state_objects WHERE key = 'jobs/job-a/head.json' FOR UPDATE`)

	bctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	lb, err := s.AcquireLease(bctx, "job-b", store.Holder{ID: "b"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.BeginRun(bctx, lb.Token, store.Run{Job: "job-b", RunID: "b1"})
	if err != nil {
		t.Fatalf("BeginRun of job B while job A's row is locked: %v", err)
	}
	r.Status = store.StatusSucceeded
	_, err = s.Commit(bctx, store.Commit{Job: "job-b", Token: lb.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}},
		Added:   []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: "a.csv"}}},
		Outputs: []store.Output{{RunID: "b1", Sink: "sink", Kind: "file", Root: "/o/", Staged: "s", Final: "f"}}})
	if err != nil {
		t.Fatalf("Commit of job B while job A's row is locked: %v", err)
	}
	if err := s.MarkPublished(bctx, "job-b", lb.Token, "b1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reset(bctx, "job-b", lb.Token, "", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RenewLease(bctx, lb, time.Hour); err != nil {
		t.Fatal(err)
	}

	// Job A's own write waits for its row.
	actx, acancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer acancel()
	_, err = s.BeginRun(actx, la.Token, store.Run{Job: "job-a", RunID: "a1"})
	if err == nil || !errors.Is(actx.Err(), context.DeadlineExceeded) {
		t.Fatalf("BeginRun of job A while its head row is locked: %v, want it to wait (until the deadline)", err)
	}
	held.Commit()
	if _, err := s.BeginRun(ctx, la.Token, store.Run{Job: "job-a", RunID: "a1"}); err != nil {
		t.Errorf("BeginRun of job A once its row is free: %v", err)
	}
}
