package storetest

import (
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// testRunHost checks that a run's Host, given at BeginRun, is kept through
// FailRun and Commit (whose records may leave it out) and listed by Runs.
func testRunHost(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	hosts := map[string]string{"f1": "worker-a:4242", "c2": "pod/étl-7f9c"}
	for _, id := range []string{"f1", "c2"} {
		if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: id, Mode: bookmark.ModeEnable, StartedAt: t0, Host: hosts[id]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FailRun(ctx, job, l.Token, "f1", t0.Add(time.Minute), store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	r := store.Run{Job: job, RunID: "c2", Mode: bookmark.ModeEnable, Status: store.StatusSucceeded, StartedAt: t0, FinishedAt: t0.Add(time.Minute)}
	mustCommit(t, s, store.Commit{Job: job, Token: l.Token, Advance: true, Run: r})
	for _, id := range []string{"f1", "c2"} {
		if got := getRun(t, s, job, id).Host; got != hosts[id] {
			t.Errorf("run %s: got host %q, want %q", id, got, hosts[id])
		}
	}
	runs, err := s.Runs(ctx, job, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Host != hosts[r.RunID] {
			t.Errorf("Runs: run %s has host %q, want %q", r.RunID, r.Host, hosts[r.RunID])
		}
	}
}
