package s3

import (
	"errors"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// TestBeginRunStalled: a host that stalls between the swap that begins
// its run and the run's record, while another host takes the lease and
// looks for dead runs, gets ErrLeaseLost and leaves no run recorded
// running behind the new holder's back.
func TestBeginRunStalled(t *testing.T) {
	srv := startServer(t)
	f := &faultHTTP{}
	slow := srv.open(t, "stalled/", Options{WrapHTTP: f.wrap})
	other := srv.open(t, "stalled/", Options{})
	ctx := t.Context()
	l, err := slow.AcquireLease(ctx, "j", store.Holder{ID: "slow"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
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
	_, err = slow.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r-slow"})
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
