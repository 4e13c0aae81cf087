package s3

import (
	"errors"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// skewed returns a host clock off by d (keeping the monotonic reading, as
// a host whose clock is set wrong has).
func skewed(d time.Duration) func() time.Time {
	return func() time.Time { return time.Now().Add(d) }
}

const year = 365 * 24 * time.Hour

// waitServerPast waits until the store's clock, as s bounds it, is surely
// past t (it asks the server, so this ends however loaded the machine is).
func waitServerPast(t *testing.T, s *Store, at time.Time) {
	t.Helper()
	for {
		gone, err := backendOf(s).Expired(t.Context(), at)
		if err != nil {
			t.Fatal(err)
		}
		if gone {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSkewedHosts: hosts whose clocks are a year ahead or behind share a
// store with a host whose clock is right. Expiry follows the server's
// clock alone: the host ahead cannot steal a live lease, the host behind
// cannot keep an expired one (another takes it and fences it out), and
// every host's Now is the server's clock.
func TestSkewedHosts(t *testing.T) {
	srv := startServer(t)
	ctx := t.Context()
	right := srv.open(t, "skew/", Options{})
	ahead := srv.open(t, "skew/", Options{LocalClock: skewed(year)})
	behind := srv.open(t, "skew/", Options{LocalClock: skewed(-year)})

	nowR, err := right.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"ahead": ahead, "behind": behind} {
		now, err := s.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d := now.Sub(nowR); d < -3*time.Second || d > 3*time.Second {
			t.Errorf("Now on the host %s = %s, want the server's clock (%s from the right host)", name, now, nowR)
		}
	}

	// A live lease: the host ahead would think it expired a year ago.
	l, err := right.AcquireLease(ctx, "steal", store.Holder{ID: "right"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ahead.AcquireLease(ctx, "steal", store.Holder{ID: "ahead"}, time.Hour)
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("host ahead acquiring a live lease: %v, want ErrLeaseHeld", err)
	}
	if _, held, err := ahead.CurrentLease(ctx, "steal"); err != nil || !held {
		t.Errorf("host ahead: CurrentLease of a live lease = held %v, %v; want held", held, err)
	}
	if err := right.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}

	// An expired lease: the host behind would think it has a year left.
	b, err := behind.AcquireLease(ctx, "keep", store.Holder{ID: "behind"}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Expires.After(nowR) || b.Expires.After(nowR.Add(time.Minute)) {
		t.Errorf("host behind got a lease expiring %s, want about 2s after the server's %s", b.Expires, nowR)
	}
	run, err := behind.BeginRun(ctx, b.Token, store.Run{Job: "keep", RunID: "r-behind"})
	if err != nil {
		t.Fatal(err)
	}
	waitServerPast(t, right, b.Expires)
	if _, held, err := behind.CurrentLease(ctx, "keep"); err != nil || held {
		t.Errorf("host behind: CurrentLease of its expired lease = held %v, %v; want free", held, err)
	}
	taker, err := right.AcquireLease(ctx, "keep", store.Holder{ID: "right"}, time.Hour)
	if err != nil {
		t.Fatalf("taking an expired lease from the host behind: %v", err)
	}
	if taker.Token <= b.Token {
		t.Errorf("token after takeover %d, want > %d", taker.Token, b.Token)
	}
	if _, err := behind.RenewLease(ctx, b, time.Hour); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("host behind renewing its taken lease: %v, want ErrLeaseLost", err)
	}
	run.Status = store.StatusSucceeded
	_, err = behind.Commit(ctx, store.Commit{Job: "keep", Token: b.Token, Advance: true, Run: run,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}}})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("host behind committing under its taken lease: %v, want ErrLeaseLost", err)
	}
	if h, _ := right.Head(ctx, "keep"); h.Version != 0 {
		t.Errorf("head after the fenced commit = version %d, want 0", h.Version)
	}

	// The host ahead cannot take the lease the right host now holds.
	if _, err := ahead.AcquireLease(ctx, "keep", store.Holder{ID: "ahead"}, time.Hour); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("host ahead acquiring the taker's live lease: %v, want ErrLeaseHeld", err)
	}
}

// TestClockBounds: the bounds the store keeps hold the server's clock
// (its Date headers) and narrow below the second of its Date headers.
func TestClockBounds(t *testing.T) {
	srv := startServer(t)
	s := srv.open(t, "bounds/", Options{LocalClock: skewed(-3 * year)})
	ctx := t.Context()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b := backendOf(s)
		if err := b.ping(ctx); err != nil {
			t.Fatal(err)
		}
		lo, hi, ok := b.clock.bounds(b.local())
		if !ok {
			t.Fatal("no bounds after an answer")
		}
		// The server runs on this machine: its clock is the real one.
		if now := time.Now(); now.Before(lo.Add(-time.Second)) || now.After(hi.Add(time.Second)) {
			t.Fatalf("bounds [%s, %s] do not hold the server's clock %s", lo, hi, now)
		}
		if hi.Sub(lo) < 900*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bounds still %s wide after 30s of answers", hi.Sub(lo))
		}
		time.Sleep(30 * time.Millisecond)
	}
}
