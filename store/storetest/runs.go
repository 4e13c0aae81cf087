package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// testRunsSeqAttempt checks Seq (per job, growing), Attempt (1 + failures
// since the last success) and that Runs lists newest first.
func testRunsSeqAttempt(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	fail := func(id string, wantSeq int64, wantAttempt int) {
		t.Helper()
		r := begin(t, s, l, id, bookmark.ModeEnable)
		if r.Seq != wantSeq || r.Attempt != wantAttempt || r.Status != store.StatusRunning {
			t.Errorf("BeginRun(%s) = seq %d attempt %d status %q, want seq %d attempt %d running",
				id, r.Seq, r.Attempt, r.Status, wantSeq, wantAttempt)
		}
		sum := store.Run{Sources: map[string]store.Count{src: {Files: 3, Bytes: 30, Rows: 7, Rejected: 1}}}
		if err := s.FailRun(ctx, job, l.Token, id, t0.Add(time.Hour), sum, "reading a.csv line 3: bad quote"); err != nil {
			t.Fatalf("FailRun(%s): %v", id, err)
		}
	}
	fail("r1", 1, 1)
	fail("r2", 2, 2)
	c := commitOf(t, s, l, "r3", bookmark.ModeEnable, 0)
	if c.Run.Seq != 3 || c.Run.Attempt != 3 {
		t.Errorf("BeginRun(r3) = seq %d attempt %d, want 3, 3", c.Run.Seq, c.Run.Attempt)
	}
	mustCommit(t, s, c)
	fail("r4", 4, 1)
	// Another job's runs neither take seqs nor count as attempts.
	lo := acquire(t, s, otherJob, "x")
	begin(t, s, lo, "x1", bookmark.ModeEnable)
	if err := s.FailRun(ctx, otherJob, lo.Token, "x1", t0, store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	r5 := begin(t, s, l, "r5", bookmark.ModePause)
	if r5.Seq != 5 || r5.Attempt != 2 {
		t.Errorf("BeginRun(r5) = seq %d attempt %d, want 5, 2", r5.Seq, r5.Attempt)
	}

	runs, err := s.Runs(ctx, job, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := runIDs(runs), []string{"r5", "r4", "r3", "r2", "r1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Runs = %v, want %v", got, want)
	}
	wantStatus := []string{store.StatusRunning, store.StatusFailed, store.StatusSucceeded, store.StatusFailed, store.StatusFailed}
	for i, r := range runs {
		if r.Status != wantStatus[i] || r.Seq != int64(5-i) || r.Job != job {
			t.Errorf("Runs[%d] = %s seq %d status %q job %q, want seq %d status %q job %q",
				i, r.RunID, r.Seq, r.Status, r.Job, 5-i, wantStatus[i], job)
		}
		if !r.StartedAt.Equal(t0) || r.StartedAt.Location() != time.UTC {
			t.Errorf("Runs[%d].StartedAt = %s, want %s (UTC)", i, r.StartedAt, t0)
		}
	}
	r4 := runs[1]
	if r4.Error != "reading a.csv line 3: bad quote" || !r4.FinishedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("failed run: error %q finished %s, want the message and %s", r4.Error, r4.FinishedAt, t0.Add(time.Hour))
	}
	if want := (store.Count{Files: 3, Bytes: 30, Rows: 7, Rejected: 1}); r4.Sources[src] != want {
		t.Errorf("failed run summary = %+v, want %+v", r4.Sources, want)
	}
	if r5 := runs[0]; r5.Mode != bookmark.ModePause || !r5.FinishedAt.IsZero() {
		t.Errorf("running run: mode %q finished %s, want pause and zero", r5.Mode, r5.FinishedAt)
	}
}

func testRunErrors(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r1")
	_, err := s.Run(ctx, job, "nope")
	wantErr(t, "Run(unknown)", err, store.ErrNotFound)
	err = s.FailRun(ctx, job, l.Token, "nope", t0, store.Run{}, "x")
	wantErr(t, "FailRun(unknown)", err, store.ErrNotFound)
	wantErr(t, "MarkPublished(unknown)", s.MarkPublished(ctx, job, l.Token, "nope"), store.ErrNotFound)
	wantErr(t, "MarkPurged(unknown)", s.MarkPurged(ctx, job, l.Token, "nope"), store.ErrNotFound)

	begin(t, s, l, "r1", bookmark.ModeEnable)
	if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: "r1", Mode: bookmark.ModeEnable, StartedAt: t0}); err == nil {
		t.Error("BeginRun of an existing run id succeeded, want an error")
	}
	if runs, _ := s.Runs(ctx, job, store.RunQuery{}); len(runs) != 1 {
		t.Errorf("after a duplicate BeginRun: %d runs, want 1", len(runs))
	}

	// A committed run cannot be failed afterwards: its bookmark moved.
	c := commitOf(t, s, l, "r2", bookmark.ModeEnable, 0)
	mustCommit(t, s, c)
	if err := s.FailRun(ctx, job, l.Token, "r2", t0, store.Run{}, "late"); err == nil {
		t.Error("FailRun of a committed run succeeded, want an error")
	}
	if r := getRun(t, s, job, "r2"); r.Status != store.StatusSucceeded || r.Error != "" {
		t.Errorf("committed run after FailRun: status %q error %q, want succeeded and none", r.Status, r.Error)
	}
	// Nor can a failed run be committed.
	if err := s.FailRun(ctx, job, l.Token, "r1", t0, store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	c.Run = getRun(t, s, job, "r1")
	c.Run.Status = store.StatusSucceeded
	c.BaseVersion = 1
	if _, err := s.Commit(ctx, c); err == nil {
		t.Error("Commit of a failed run succeeded, want an error")
	}
	wantHead(t, s, job, 1, "r2")

	if err := s.MarkPurged(ctx, job, l.Token, "r2"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkPurged(ctx, job, l.Token, "r2"); err != nil {
		t.Errorf("second MarkPurged: %v, want nil", err)
	}
	if r := getRun(t, s, job, "r2"); !r.Purged {
		t.Error("run r2 not Purged after MarkPurged")
	}
}

// testRunJobFile checks that a run's JobFile, given at BeginRun, is kept
// through FailRun and Commit (whose summaries may leave it out).
func testRunJobFile(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	const file = "/jobs/sales <é>.yaml"
	for _, id := range []string{"f1", "c2"} {
		if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: id, Mode: bookmark.ModeEnable, StartedAt: t0, JobFile: file}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FailRun(ctx, job, l.Token, "f1", t0.Add(time.Minute), store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	r := store.Run{Job: job, RunID: "c2", Mode: bookmark.ModeEnable, Status: store.StatusSucceeded, StartedAt: t0, FinishedAt: t0.Add(time.Minute)}
	mustCommit(t, s, store.Commit{Job: job, Token: l.Token, Advance: true, Run: r})
	for _, id := range []string{"f1", "c2"} {
		if got := getRun(t, s, job, id).JobFile; got != file {
			t.Errorf("run %s: got job file %q, want %q", id, got, file)
		}
	}
}
