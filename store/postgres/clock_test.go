package postgres

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestLeaseIgnoresClientClock: a host whose clock is wrong passes its
// times wherever the API takes one (Holder.Started, Run.StartedAt,
// FailRun's finished, Commit's FinishedAt), a year ahead or behind. Lease
// decisions do not move: expiry stays ttl after the database's clock, a
// live lease stays held against a rival, and an expired one is taken.
func TestLeaseIgnoresClientClock(t *testing.T) {
	db := newDB(t)
	s := db.open(t)
	ctx := t.Context()
	year := 365 * 24 * time.Hour
	for _, skew := range []time.Duration{year, -year} {
		wrong := time.Now().Add(skew)
		job := "skew" + skew.String()
		before, err := s.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.AcquireLease(ctx, job, store.Holder{ID: "a", Host: "bad-clock", Started: wrong}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := s.Now(ctx)
		if a.Expires.Before(before.Add(time.Hour)) || a.Expires.After(after.Add(time.Hour)) {
			t.Errorf("skew %s: lease expires %s, want an hour after the database's clock %s", skew, a.Expires, before)
		}
		if !a.Holder.Started.Equal(wrong) {
			t.Errorf("skew %s: Holder.Started = %s, want the holder's own %s (recorded, deciding nothing)", skew, a.Holder.Started, wrong)
		}
		r, err := s.BeginRun(ctx, a.Token, store.Run{Job: job, RunID: "f", StartedAt: wrong})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FailRun(ctx, job, a.Token, "f", wrong.Add(time.Minute), store.Run{}, "boom"); err != nil {
			t.Fatal(err)
		}
		c, err := s.BeginRun(ctx, a.Token, store.Run{Job: job, RunID: "c", StartedAt: wrong})
		if err != nil {
			t.Fatal(err)
		}
		c.Status, c.FinishedAt = store.StatusSucceeded, wrong.Add(2*time.Minute)
		if _, err := s.Commit(ctx, store.Commit{Job: job, Token: a.Token, Advance: true, Run: c}); err != nil {
			t.Fatal(err)
		}
		// The times are the run's record, kept as given.
		if got := mustRun(t, s, job, "f"); !got.StartedAt.Equal(wrong) || !got.FinishedAt.Equal(wrong.Add(time.Minute)) {
			t.Errorf("skew %s: failed run's times %s..%s, want the host's %s..", skew, got.StartedAt, got.FinishedAt, r.StartedAt)
		}
		// The lease is where the database's clock put it.
		cur, held, err := s.CurrentLease(ctx, job)
		if err != nil || !held || !cur.Expires.Equal(a.Expires) {
			t.Errorf("skew %s: CurrentLease = %+v held %v err %v; want a's lease expiring %s", skew, cur, held, err, a.Expires)
		}
		_, err = s.AcquireLease(ctx, job, store.Holder{ID: "b", Started: wrong}, time.Hour)
		if !errors.Is(err, store.ErrLeaseHeld) {
			t.Errorf("skew %s: a rival took a lease live on the database's clock: %v", skew, err)
		}
	}

	// A lease expired on the database's clock is taken, whatever time the
	// holder claims; its fenced-out holder cannot renew it back.
	a, err := s.AcquireLease(ctx, "short", store.Holder{ID: "a", Started: time.Now().Add(year)}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	b, err := s.AcquireLease(ctx, "short", store.Holder{ID: "b", Started: time.Now().Add(-year)}, time.Hour)
	if err != nil {
		t.Fatalf("taking a lease expired on the database's clock: %v", err)
	}
	if _, err := s.RenewLease(ctx, a, 10*year); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("renewing a lease taken over: got %v, want ErrLeaseLost", err)
	}
	if b.Token <= a.Token {
		t.Errorf("token after takeover %d, want > %d", b.Token, a.Token)
	}
}

func mustRun(t *testing.T, s *Store, job, id string) store.Run {
	t.Helper()
	r, err := s.Run(t.Context(), job, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunHostRoundTrips: every field of a run, Host and JobFile included,
// comes back as recorded through BeginRun, Commit, FailRun, Runs,
// Unpublished and Reset.
func TestRunHostRoundTrips(t *testing.T) {
	db := newDB(t)
	s := db.open(t)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "job", store.Holder{ID: "a", Host: "worker-7:4242"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
	r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "r1", Mode: bookmark.ModeEnable, StartedAt: t0,
		JobFile: "/jobs/sales.yaml", Host: "worker-7:4242"})
	if err != nil {
		t.Fatal(err)
	}
	r.Status, r.FinishedAt = store.StatusSucceeded, t0.Add(time.Minute)
	r.Sources = map[string]store.Count{"src": {Files: 2, Bytes: 20, Rows: 3, Skipped: 1,
		Detail: store.RawCount{RawDetail: bookmark.RawDetail{Of: bookmark.KindTable, JSON: `{"table":true,"keys_after":"1","keys_up_to":"9"}`}}}}
	r.Sinks = map[string]store.Count{"sink": {Files: 1, Rows: 3}}
	out := store.Output{RunID: "r1", Sink: "sink", Kind: "file", Root: "/o/", Staged: "s", Final: "f", Rows: 3, Bytes: 9}
	if _, err := s.Commit(ctx, store.Commit{Job: "job", Token: l.Token, Advance: true, Run: r, Outputs: []store.Output{out}}); err != nil {
		t.Fatal(err)
	}
	want := r
	want.Version = 1
	if got := mustRun(t, s, "job", "r1"); !reflect.DeepEqual(got, want) {
		t.Errorf("Run after commit:\n got %+v\nwant %+v", got, want)
	}
	runs, err := s.Runs(ctx, "job", store.RunQuery{})
	if err != nil || len(runs) != 1 || !reflect.DeepEqual(runs[0], want) {
		t.Errorf("Runs = %+v, %v; want [%+v]", runs, err, want)
	}
	un, err := s.Unpublished(ctx, "job")
	if err != nil || len(un) != 1 || un[0].Host != "worker-7:4242" {
		t.Errorf("Unpublished = %+v, %v; want r1 with its host", un, err)
	}
	if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "r2", StartedAt: t0, Host: "worker-8:1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.FailRun(ctx, "job", l.Token, "r2", t0.Add(time.Hour), store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "job", "r2"); got.Host != "worker-8:1" || got.Error != "boom" || got.Attempt != 1 {
		t.Errorf("failed run: host %q error %q attempt %d, want worker-8:1, boom, 1", got.Host, got.Error, got.Attempt)
	}
	// A host or job file first known at the commit is recorded then; one
	// the commit leaves out keeps what BeginRun recorded.
	r3, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "r3", StartedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	r3.Status, r3.Host, r3.JobFile = store.StatusSucceeded, "worker-9:2", "/jobs/late.yaml"
	if _, err := s.Commit(ctx, store.Commit{Job: "job", Token: l.Token, Run: r3}); err != nil {
		t.Fatal(err)
	}
	if got := mustRun(t, s, "job", "r3"); got.Host != "worker-9:2" || got.JobFile != "/jobs/late.yaml" {
		t.Errorf("run committed with its host: host %q job file %q, want worker-9:2, /jobs/late.yaml", got.Host, got.JobFile)
	}
	undone, err := s.Reset(ctx, "job", l.Token, "", "test")
	if err != nil || len(undone) != 2 || undone[0].Host != "worker-7:4242" || !undone[0].Undone {
		t.Errorf("Reset undid %+v, %v; want r1 with its host, and r3", undone, err)
	}
}
