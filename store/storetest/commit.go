package storetest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

func testEmptyJob(t *testing.T, s store.Store) {
	ctx := t.Context()
	h := wantHead(t, s, job, 0, "")
	if !h.UpdatedAt.IsZero() {
		t.Errorf("Head of a new job: UpdatedAt = %s, want zero", h.UpdatedAt)
	}
	wantStates(t, s, job, nil)
	wantFiles(t, "Files of a new job", files(t, s, job, src), nil)
	runs, err := s.Runs(ctx, job, store.RunQuery{})
	if err != nil || len(runs) != 0 {
		t.Errorf("Runs of a new job = %v, %v; want none", runIDs(runs), err)
	}
	un, err := s.Unpublished(ctx, job)
	if err != nil || len(un) != 0 {
		t.Errorf("Unpublished of a new job = %v, %v; want none", runIDs(un), err)
	}
}

func testCommitAdvances(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Sources = map[string]bookmark.SourceState{src: state("fp1", 2)}
	c.Added = recs(src, file("b.csv", 2), file("a.csv", 1))
	before := time.Now()
	h := mustCommit(t, s, c)
	if h.Job != job || h.Version != 1 || h.RunID != "r1" {
		t.Errorf("Commit returned head %+v, want version 1 run r1", h)
	}
	got := wantHead(t, s, job, 1, "r1")
	if !near(got.UpdatedAt, before, time.Minute) {
		t.Errorf("head UpdatedAt = %s, want about %s", got.UpdatedAt, before)
	}
	wantStates(t, s, job, c.Sources)
	wantFiles(t, "Files after first commit", files(t, s, job, src), []bookmark.File{file("a.csv", 1), file("b.csv", 2)})

	r := getRun(t, s, job, "r1")
	want := c.Run
	want.Version = 1
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Run after commit:\n got %+v\nwant %+v", r, want)
	}
}

func testCommitStaleToken(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, err := s.AcquireLease(ctx, job, holder("r1"), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := commitOf(t, s, a, "r1", bookmark.ModeEnable, 0)
	c.Sources = map[string]bookmark.SourceState{src: state("fp1", 1)}
	c.Added = recs(src, file("a.csv", 1))
	c.Outputs = []store.Output{{RunID: "r1", Sink: "orders_sink", Root: "out/", Staged: "_tidemark/r1/part-r1-0.parquet", Final: "part-r1-0.parquet", Rows: 1, Bytes: 10}}
	time.Sleep(120 * time.Millisecond)
	b := acquire(t, s, job, "r2")

	_, err = s.Commit(ctx, c)
	wantErr(t, "Commit with a token taken over", err, store.ErrLeaseLost)
	wantNothingCommitted(t, s, "r1")

	// A released lease fences too.
	if err := s.ReleaseLease(ctx, b); err != nil {
		t.Fatal(err)
	}
	c.Token = b.Token
	_, err = s.Commit(ctx, c)
	wantErr(t, "Commit with a released token", err, store.ErrLeaseLost)
	wantNothingCommitted(t, s, "r1")

	// With the current token the same commit goes through.
	cur := acquire(t, s, job, "r1")
	c.Token = cur.Token
	mustCommit(t, s, c)
	wantHead(t, s, job, 1, "r1")
}

// wantNothingCommitted checks that run id's commit left no trace.
func wantNothingCommitted(t *testing.T, s store.Store, id string) {
	t.Helper()
	wantHead(t, s, job, 0, "")
	wantStates(t, s, job, nil)
	wantFiles(t, "Files after a refused commit", files(t, s, job, src), nil)
	if r := getRun(t, s, job, id); r.Status != store.StatusRunning || r.Version != 0 {
		t.Errorf("run %s after a refused commit: status %q version %d, want running, 0", id, r.Status, r.Version)
	}
	outs, err := s.Outputs(t.Context(), job, id)
	if err != nil || len(outs) != 0 {
		t.Errorf("Outputs after a refused commit = %v, %v; want none", outs, err)
	}
}

func testCommitVersionConflict(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r1")
	s1 := map[string]bookmark.SourceState{src: state("fp1", 1)}
	advance(t, s, l, "r1", 0, s1, recs(src, file("a.csv", 1)), nil)

	c := commitOf(t, s, l, "r2", bookmark.ModeEnable, 0) // planned before r1 committed
	c.Sources = map[string]bookmark.SourceState{src: state("fp1", 2)}
	c.Added = recs(src, file("b.csv", 2))
	c.Outputs = []store.Output{{RunID: "r2", Sink: "orders_sink", Root: "out/", Staged: "_tidemark/r2/p", Final: "p", Rows: 1, Bytes: 1}}
	_, err := s.Commit(ctx, c)
	wantErr(t, "Commit on a stale base", err, store.ErrVersionConflict)

	wantHead(t, s, job, 1, "r1")
	wantStates(t, s, job, s1)
	wantFiles(t, "Files after a conflicting commit", files(t, s, job, src), []bookmark.File{file("a.csv", 1)})
	if r := getRun(t, s, job, "r2"); r.Status != store.StatusRunning {
		t.Errorf("run r2 after a conflicting commit: status %q, want running", r.Status)
	}
	if outs, _ := s.Outputs(ctx, job, "r2"); len(outs) != 0 {
		t.Errorf("Outputs of the conflicting run = %v, want none", outs)
	}

	// Planned again on the new head, it commits.
	c.BaseVersion = 1
	if h := mustCommit(t, s, c); h.Version != 2 || h.RunID != "r2" {
		t.Errorf("Commit on the fresh base returned %+v, want version 2 run r2", h)
	}
	wantFiles(t, "Files after the retried commit", files(t, s, job, src), []bookmark.File{file("a.csv", 1), file("b.csv", 2)})
}

// testCommitRace commits two runs planned on the same base at once: one
// wins, the other gets ErrVersionConflict.
func testCommitRace(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r")
	var cs []store.Commit
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		c := commitOf(t, s, l, id, bookmark.ModeEnable, 0)
		c.Sources = map[string]bookmark.SourceState{src: state(id, 1)}
		c.Added = recs(src, file(id+".csv", 1))
		cs = append(cs, c)
	}
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() { _, errs[i] = s.Commit(t.Context(), c) })
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil && winner != "":
			t.Errorf("runs %s and %s both committed on base 0", winner, cs[i].Run.RunID)
		case err == nil:
			winner = cs[i].Run.RunID
		case !errors.Is(err, store.ErrVersionConflict):
			t.Errorf("Commit(%s): %v, want nil or ErrVersionConflict", cs[i].Run.RunID, err)
		}
	}
	if winner == "" {
		t.Fatal("no commit won")
	}
	wantHead(t, s, job, 1, winner)
	wantFiles(t, "Files after the race", files(t, s, job, src), []bookmark.File{file(winner+".csv", 1)})
}

func testCommitTwice(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Sources = map[string]bookmark.SourceState{src: state("fp1", 1)}
	c.Added = recs(src, file("a.csv", 1))
	mustCommit(t, s, c)
	c.BaseVersion = 1
	c.Added = recs(src, file("b.csv", 1))
	if _, err := s.Commit(t.Context(), c); err == nil {
		t.Fatal("second Commit of run r1 succeeded, want an error")
	}
	wantHead(t, s, job, 1, "r1")
	wantFiles(t, "Files after a repeated commit", files(t, s, job, src), []bookmark.File{file("a.csv", 1)})
}

func testCommitNonAdvancing(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	s1 := map[string]bookmark.SourceState{src: state("fp1", 1)}
	advance(t, s, l, "r1", 0, s1, recs(src, file("a.csv", 1)), nil)

	for _, tc := range []struct {
		id   string
		mode bookmark.Mode
	}{{"r2", bookmark.ModePause}, {"r3", bookmark.ModeDisable}} {
		c := commitOf(t, s, l, tc.id, tc.mode, 0) // a stale base does not matter without Advance
		if c.Advance {
			t.Fatalf("%s commit advances", tc.mode)
		}
		h := mustCommit(t, s, c)
		if h.Version != 1 || h.RunID != "r1" {
			t.Errorf("%s commit returned head %+v, want version 1 run r1", tc.mode, h)
		}
		wantHead(t, s, job, 1, "r1")
		r := getRun(t, s, job, tc.id)
		if r.Status != store.StatusSucceeded || r.Version != 1 || r.Mode != tc.mode {
			t.Errorf("%s run: status %q version %d mode %q, want succeeded, 1, %s", tc.mode, r.Status, r.Version, r.Mode, tc.mode)
		}
	}
	wantStates(t, s, job, s1)
	wantFiles(t, "Files after pause and disable runs", files(t, s, job, src), []bookmark.File{file("a.csv", 1)})
}

// testSourceStatesFullSet checks that each version holds the full set of
// states: a ctx left out of a commit is gone from the new head.
func testSourceStatesFullSet(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	s1 := map[string]bookmark.SourceState{src: state("fp1", 1), src2: state("fp2", 5)}
	advance(t, s, l, "r1", 0, s1, nil, nil)
	wantStates(t, s, job, s1)

	s2 := map[string]bookmark.SourceState{src: state("fp1b", 3)}
	advance(t, s, l, "r2", 1, s2, nil, nil)
	wantStates(t, s, job, s2)

	tbl := bookmark.SourceState{Kind: "table", Fingerprint: "fp3", Detail: tableDetail(`{"cursor":{"k":[1,"x"]}}`)}
	s3 := map[string]bookmark.SourceState{src: state("fp1b", 4), "orders_table": tbl}
	advance(t, s, l, "r3", 2, s3, nil, nil)
	wantStates(t, s, job, s3)
}
