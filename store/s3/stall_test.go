package s3

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// twoHosts opens the store at prefix twice: slow, through f, which holds
// job j's lease l, and other.
func twoHosts(t *testing.T, prefix string) (f *faultHTTP, slow, other *Store, l store.Lease) {
	srv := startServer(t)
	f = &faultHTTP{}
	slow = srv.open(t, prefix, Options{WrapHTTP: f.wrap})
	other = srv.open(t, prefix, Options{})
	l, err := slow.AcquireLease(t.Context(), "j", store.Holder{ID: "slow"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return f, slow, other, l
}

// TestBeginRunStalled: a host that stalls between the swap that begins
// its run and the run's record, while another host takes the lease and
// looks for dead runs, gets ErrLeaseLost and leaves no run recorded
// running behind the new holder's back.
func TestBeginRunStalled(t *testing.T) {
	f, slow, other, l := twoHosts(t, "stalled/")
	ctx := t.Context()
	f.add(faultRule{method: "PUT", key: "/runs/", times: 1, before: func() {
		if err := other.BreakLease(ctx, "j", l.Token); err != nil {
			t.Error(err)
		}
		if _, err := other.AcquireLease(ctx, "j", store.Holder{ID: "other"}, time.Hour); err != nil {
			t.Error(err)
		}
		if runs, err := other.Runs(ctx, "j", store.RunQuery{}); err != nil || len(runs) != 0 {
			t.Errorf("the new holder's scan: %v, %v; want no runs yet", runs, err)
		}
	}})
	_, err := slow.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r-slow"})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("BeginRun of a host whose lease was taken while it stalled: %v, want ErrLeaseLost", err)
	}
	runs, err := other.Runs(ctx, "j", store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Status == store.StatusRunning {
			t.Errorf("run %s is recorded running, begun under a lease that was lost", r.RunID)
		}
	}
}

// TestBeginRunStalledThenCutOff: as TestBeginRunStalled, but the stalled
// host cannot take its late record back (its DELETEs fail: it was killed
// or cut off right then). The record, indexed below the new holder's
// run, is never reached by a walk back to the newest succeeded run: once
// that run succeeded it reads as failed.
func TestBeginRunStalledThenCutOff(t *testing.T) {
	f, slow, other, l := twoHosts(t, "cutoff/")
	ctx := t.Context()
	var ol store.Lease
	f.add(faultRule{method: "PUT", key: "/runs/", times: 1, before: func() {
		if err := other.BreakLease(ctx, "j", l.Token); err != nil {
			t.Error(err)
		}
		var err error
		if ol, err = other.AcquireLease(ctx, "j", store.Holder{ID: "other"}, time.Hour); err != nil {
			t.Error(err)
		}
	}})
	f.add(faultRule{method: "DELETE", key: "/", times: 1000, status: 503})
	if _, err := slow.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r-slow"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("BeginRun of a host whose lease was taken while it stalled: %v, want ErrLeaseLost", err)
	}
	if f.injected() < 2 {
		t.Fatalf("the stalled host's deletes were not refused (%d faults): the test tested nothing", f.injected())
	}
	r, err := other.BeginRun(ctx, ol.Token, store.Run{Job: "j", RunID: "r-other"})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = store.StatusSucceeded
	if _, err := other.Commit(ctx, store.Commit{Job: "j", Token: ol.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}}}); err != nil {
		t.Fatal(err)
	}
	for _, st := range []*Store{other, slow} {
		got, err := st.Run(ctx, "j", "r-slow")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.StatusFailed || !strings.Contains(got.Error, "died before it committed") {
			t.Errorf("Run(r-slow) after the new holder committed: %s %q, want failed, died before it committed", got.Status, got.Error)
		}
	}
	runs, err := other.Runs(ctx, "j", store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].RunID != "r-other" || runs[0].Status != store.StatusSucceeded ||
		runs[1].RunID != "r-slow" || runs[1].Status != store.StatusFailed {
		t.Errorf("runs: %+v, want r-other succeeded, r-slow failed", runs)
	}
}

// TestBeginRunCanceledByLeaseLoss: the lease's loss cancels the run's
// context (the renewal found it gone) while its record is being written:
// BeginRun still takes back what it wrote and says the lease was lost.
func TestBeginRunCanceledByLeaseLoss(t *testing.T) {
	f, slow, other, l := twoHosts(t, "canceled/")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.add(faultRule{method: "PUT", key: "/seqs/", times: 1, before: func() {
		if err := other.BreakLease(t.Context(), "j", l.Token); err != nil {
			t.Error(err)
		}
		cancel()
	}})
	if _, err := slow.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r-slow"}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("BeginRun canceled by the loss of its lease: %v, want ErrLeaseLost", err)
	}
	if f.injected() != 1 {
		t.Fatalf("the index entry's write was not reached (%d faults): the test tested nothing", f.injected())
	}
	if r, err := other.Run(t.Context(), "j", "r-slow"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Run(r-slow) after its BeginRun was canceled: %+v, %v; want ErrNotFound", r, err)
	}
}
