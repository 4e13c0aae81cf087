package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// testLeaseOnStoreClock: a lease's expiry is ttl after the store's Now,
// read before and after the acquisition.
func testLeaseOnStoreClock(t *testing.T, s store.Store) {
	ctx := t.Context()
	before, err := s.Now(ctx)
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	l := acquire(t, s, job, "a")
	after, err := s.Now(ctx)
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	if l.Expires.Before(before.Add(time.Hour)) || l.Expires.After(after.Add(time.Hour)) {
		t.Errorf("lease expires %s, want an hour after the store's clock read %s..%s", l.Expires, before, after)
	}
	r, err := s.RenewLease(ctx, l, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := s.Now(ctx)
	if r.Expires.Before(after.Add(2*time.Hour)) || r.Expires.After(end.Add(2*time.Hour)) {
		t.Errorf("renewed lease expires %s, want two hours after the store's clock read %s..%s", r.Expires, after, end)
	}
}

// Clock is a settable clock for RunClock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// RunClock runs the tests of a backend whose clock a test can set: open
// must return a new, empty store whose clock is clock.Now. They check that
// lease expiry is judged by the store's clock, never the caller's.
func RunClock(t *testing.T, open func(t *testing.T, clock *Clock) store.Store) {
	t.Run("ExpiryAhead", func(t *testing.T) {
		// The store's clock is a year ahead of the caller's: by the
		// caller's clock the lease has a year to live, by the store's it
		// expired.
		clock := &Clock{now: time.Now().Add(365 * 24 * time.Hour)}
		s := open(t, clock)
		a, err := s.AcquireLease(t.Context(), job, holder("a"), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if now, _ := s.Now(t.Context()); !now.Equal(clock.Now()) {
			t.Errorf("Now = %s, want the store's clock %s", now, clock.Now())
		}
		if !a.Expires.Equal(clock.Now().Add(time.Minute)) {
			t.Errorf("lease expires %s, want %s (a minute on the store's clock)", a.Expires, clock.Now().Add(time.Minute))
		}
		_, err = s.AcquireLease(t.Context(), job, holder("b"), time.Minute)
		wantHeld(t, err, job, "a")
		clock.Add(2 * time.Minute)
		if !a.Expires.After(time.Now()) {
			t.Fatal("setup: the lease should look live by the caller's clock")
		}
		b, err := s.AcquireLease(t.Context(), job, holder("b"), time.Minute)
		if err != nil {
			t.Fatalf("AcquireLease of a lease expired on the store's clock: %v", err)
		}
		if b.Token <= a.Token {
			t.Errorf("token after takeover %d, want > %d", b.Token, a.Token)
		}
	})
	t.Run("ExpiryBehind", func(t *testing.T) {
		// The store's clock is a year behind: by the caller's clock the
		// lease expired long ago, by the store's it is live.
		clock := &Clock{now: time.Now().Add(-365 * 24 * time.Hour)}
		s := open(t, clock)
		if _, err := s.AcquireLease(t.Context(), job, holder("a"), time.Hour); err != nil {
			t.Fatal(err)
		}
		_, err := s.AcquireLease(t.Context(), job, holder("b"), time.Hour)
		if !errors.Is(err, store.ErrLeaseHeld) {
			t.Fatalf("AcquireLease of a lease live on the store's clock (expired on the caller's): got %v, want ErrLeaseHeld", err)
		}
	})
}
