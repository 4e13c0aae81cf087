package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// wantHeld fails the test unless err is a *store.LeaseHeldError for job
// naming holder id.
func wantHeld(t *testing.T, err error, job, id string) *store.LeaseHeldError {
	t.Helper()
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("AcquireLease(%q) of a held lease: got error %v, want ErrLeaseHeld", job, err)
	}
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("AcquireLease(%q): error %T is not a *store.LeaseHeldError", job, err)
	}
	if held.Job != job || held.Holder.ID != id {
		t.Errorf("LeaseHeldError names job %q holder %q, want job %q holder %q", held.Job, held.Holder.ID, job, id)
	}
	return held
}

func testLeaseExclusive(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := acquire(t, s, job, "run-a")
	if a.Token <= 0 || a.Job != job || a.Holder.ID != "run-a" {
		t.Errorf("lease = %+v, want job %q, holder run-a, positive token", a, job)
	}
	if !near(a.Expires, time.Now().Add(time.Hour), time.Minute) {
		t.Errorf("lease expires %s, want about an hour from now", a.Expires)
	}

	_, err := s.AcquireLease(ctx, job, holder("run-b"), time.Hour)
	held := wantHeld(t, err, job, "run-a")
	want := holder("run-a")
	if held.Holder.Host != want.Host || held.Holder.PID != want.PID || !held.Holder.Started.Equal(want.Started) {
		t.Errorf("holder = %+v, want %+v", held.Holder, want)
	}
	if !near(held.Expires, a.Expires, time.Millisecond) {
		t.Errorf("LeaseHeldError expires %s, want %s", held.Expires, a.Expires)
	}

	// Leases are per job.
	o := acquire(t, s, otherJob, "run-c")
	if o.Holder.ID != "run-c" {
		t.Errorf("lease of %q held by %q, want run-c", otherJob, o.Holder.ID)
	}
}

func testLeaseExpiryTakeover(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, err := s.AcquireLease(ctx, job, holder("run-a"), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(120 * time.Millisecond)

	b := acquire(t, s, job, "run-b")
	if b.Token <= a.Token {
		t.Errorf("token after takeover = %d, want > %d", b.Token, a.Token)
	}
	_, err = s.RenewLease(ctx, a, time.Hour)
	wantErr(t, "RenewLease of a lost lease", err, store.ErrLeaseLost)
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Errorf("ReleaseLease of a lost lease: %v, want nil", err)
	}
	// Releasing the lost lease must not have freed b's.
	_, err = s.AcquireLease(ctx, job, holder("run-c"), time.Hour)
	wantHeld(t, err, job, "run-b")
}

func testLeaseRenew(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, err := s.AcquireLease(ctx, job, holder("run-a"), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.RenewLease(ctx, a, time.Hour)
	if err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	if r.Token != a.Token || r.Holder.ID != a.Holder.ID {
		t.Errorf("renewed lease = %+v, want token %d holder %q", r, a.Token, a.Holder.ID)
	}
	if r.Expires.Before(a.Expires.Add(30 * time.Minute)) {
		t.Errorf("renewed lease expires %s, want about an hour from now", r.Expires)
	}
	time.Sleep(300 * time.Millisecond) // past the original expiry
	_, err = s.AcquireLease(ctx, job, holder("run-b"), time.Hour)
	wantHeld(t, err, job, "run-a")
}

func testLeaseRelease(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := acquire(t, s, job, "run-a")
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Fatalf("ReleaseLease: %v", err)
	}
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Errorf("second ReleaseLease: %v, want nil (idempotent)", err)
	}
	_, err := s.RenewLease(ctx, a, time.Hour)
	wantErr(t, "RenewLease after release", err, store.ErrLeaseLost)
	if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", job)) {
		t.Errorf("RenewLease after release: %q does not name job %q", err, job)
	}

	b := acquire(t, s, job, "run-b")
	if b.Token <= a.Token {
		t.Errorf("token after release and re-acquire = %d, want > %d", b.Token, a.Token)
	}
	_, err = s.RenewLease(ctx, a, time.Hour)
	wantErr(t, "RenewLease of a lease taken since", err, store.ErrLeaseLost)
	if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", job)) {
		t.Errorf("RenewLease of a lease taken since: %q does not name job %q", err, job)
	}
	if err := s.ReleaseLease(ctx, a); err != nil {
		t.Errorf("ReleaseLease with a stale token: %v, want nil", err)
	}
	_, err = s.AcquireLease(ctx, job, holder("run-c"), time.Hour)
	wantHeld(t, err, job, "run-b")
}

// testLeaseRace has goroutines race for a free lease, several rounds:
// exactly one wins each round, every other gets ErrLeaseHeld (and nothing
// else, such as a backend's "database is locked"), and tokens grow.
func testLeaseRace(t *testing.T, s store.Store) {
	const racers, rounds = 16, 5
	ctx := t.Context()
	var last int64
	for round := range rounds {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []store.Lease
			others  []error
		)
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				<-start
				l, err := s.AcquireLease(ctx, job, holder(fmt.Sprintf("run-%d-%d", round, i)), time.Hour)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					winners = append(winners, l)
				case !errors.Is(err, store.ErrLeaseHeld):
					others = append(others, err)
				}
			})
		}
		close(start)
		wg.Wait()
		for _, err := range others {
			t.Errorf("round %d: AcquireLease: %v, want nil or ErrLeaseHeld", round, err)
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d of %d racers got the lease, want exactly 1", round, len(winners), racers)
		}
		w := winners[0]
		if w.Token <= last {
			t.Errorf("round %d: token %d, want > %d", round, w.Token, last)
		}
		last = w.Token
		if err := s.ReleaseLease(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
}

// testLeaseBreak: breaking a dead holder's lease frees it at once, only with
// the holder's current token, and fences the broken holder out.
func testLeaseBreak(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := acquire(t, s, job, "run-a")
	_, err := s.AcquireLease(ctx, job, holder("run-b"), time.Hour)
	held := wantHeld(t, err, job, "run-a")
	if held.Token != a.Token {
		t.Fatalf("LeaseHeldError token %d, want the holder's %d", held.Token, a.Token)
	}
	if err := s.BreakLease(ctx, job, a.Token+1); err != nil {
		t.Fatalf("BreakLease with a wrong token: %v", err)
	}
	_, err = s.AcquireLease(ctx, job, holder("run-b"), time.Hour)
	wantHeld(t, err, job, "run-a") // a wrong token breaks nothing
	if err := s.BreakLease(ctx, job, a.Token); err != nil {
		t.Fatalf("BreakLease: %v", err)
	}
	b := acquire(t, s, job, "run-b")
	if b.Token <= a.Token {
		t.Errorf("token after break %d, want > %d", b.Token, a.Token)
	}
	if err := s.BreakLease(ctx, job, a.Token); err != nil { // idempotent, and b stays
		t.Fatalf("BreakLease again: %v", err)
	}
	if _, err := s.RenewLease(ctx, a, time.Hour); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("renewing a broken lease: got %v, want ErrLeaseLost", err)
	}
	_, err = s.AcquireLease(ctx, job, holder("run-c"), time.Hour)
	wantHeld(t, err, job, "run-b")
}
