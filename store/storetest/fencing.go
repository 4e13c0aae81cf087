package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// takeOver breaks lease a and acquires the job's lease anew: a's token is
// stale from then on.
func takeOver(t *testing.T, s store.Store, a store.Lease, id string) store.Lease {
	t.Helper()
	if err := s.BreakLease(t.Context(), a.Job, a.Token); err != nil {
		t.Fatalf("BreakLease: %v", err)
	}
	return acquire(t, s, a.Job, id)
}

// testFencedWrites: every write a lease holder makes (BeginRun, FailRun,
// MarkPublished, MarkPurged, Reset) is refused with ErrLeaseLost once its
// lease was broken and taken again, and changes nothing.
func testFencedWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := acquire(t, s, job, "a")
	c := commitOf(t, s, a, "r1", bookmark.ModeEnable, 0)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", 1)}
	c.Added = recs(src, file("a.csv", 1))
	c.Outputs = []store.Output{output("r1", "sink", "part-r1-0.csv")}
	mustCommit(t, s, c)
	begin(t, s, a, "r2", bookmark.ModeEnable)
	b := takeOver(t, s, a, "b")
	before, err := s.Runs(ctx, job, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}

	_, err = s.BeginRun(ctx, a.Token, store.Run{Job: job, RunID: "r3", StartedAt: t0})
	wantErr(t, "BeginRun with a stale token", err, store.ErrLeaseLost)
	wantErr(t, "FailRun with a stale token", s.FailRun(ctx, job, a.Token, "r2", t0, store.Run{}, "late"), store.ErrLeaseLost)
	wantErr(t, "MarkPublished with a stale token", s.MarkPublished(ctx, job, a.Token, "r1"), store.ErrLeaseLost)
	wantErr(t, "MarkPurged with a stale token", s.MarkPurged(ctx, job, a.Token, "r1"), store.ErrLeaseLost)
	_, err = s.Reset(ctx, job, a.Token, "", "test")
	wantErr(t, "Reset with a stale token", err, store.ErrLeaseLost)
	// A token of another job's lease is stale too.
	o := acquire(t, s, otherJob, "o")
	_, err = s.BeginRun(ctx, o.Token, store.Run{Job: job, RunID: "r3", StartedAt: t0})
	wantErr(t, "BeginRun with another job's token", err, store.ErrLeaseLost)

	after, err := s.Runs(ctx, job, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("runs after refused writes:\n got %+v\nwant %+v", after, before)
	}
	wantHead(t, s, job, 1, "r1")
	if un, err := s.Unpublished(ctx, job); err != nil || len(un) != 1 {
		t.Errorf("Unpublished after a refused MarkPublished = %v, %v; want [r1]", runIDs(un), err)
	}

	// The current holder's writes go through.
	if err := s.FailRun(ctx, job, b.Token, "r2", t0, store.Run{}, "died"); err != nil {
		t.Errorf("FailRun with the current token: %v", err)
	}
	if err := s.MarkPublished(ctx, job, b.Token, "r1"); err != nil {
		t.Errorf("MarkPublished with the current token: %v", err)
	}
	if err := s.MarkPurged(ctx, job, b.Token, "r1"); err != nil {
		t.Errorf("MarkPurged with the current token: %v", err)
	}
	if r, err := s.BeginRun(ctx, b.Token, store.Run{Job: job, RunID: "r3", StartedAt: t0}); err != nil || r.Seq != 3 {
		t.Errorf("BeginRun with the current token = seq %d, %v; want seq 3", r.Seq, err)
	}
}

// testFencedAfterRelease: a released lease's token fences its writes
// too, and expiry alone does not (no one took the lease).
func testFencedAfterRelease(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, err := s.AcquireLease(ctx, job, holder("a"), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond) // expired, not taken
	if _, err := s.BeginRun(ctx, a.Token, store.Run{Job: job, RunID: "r1", StartedAt: t0}); err != nil {
		t.Fatalf("BeginRun with an expired token no one took: %v, want nil", err)
	}
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Fatal(err)
	}
	err = s.FailRun(ctx, job, a.Token, "r1", t0, store.Run{}, "x")
	wantErr(t, "FailRun with a released token", err, store.ErrLeaseLost)
	if r := getRun(t, s, job, "r1"); r.Status != store.StatusRunning {
		t.Errorf("run after a refused FailRun: status %q, want running", r.Status)
	}
}
