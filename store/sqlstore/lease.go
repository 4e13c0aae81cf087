package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// Leaser is a dialect's lease table, whose schema differs: SQLite deletes
// a released lease's row and keeps each job's last token in a table of
// its own, PostgreSQL keeps the row with a held flag and judges expiry by
// its own clock in the statement that takes the lease.
type Leaser interface {
	// Acquire takes the job's lease for ttl (positive) if it is free or
	// expired, with a token greater than any before; a
	// *store.LeaseHeldError if a live holder has it.
	Acquire(ctx context.Context, job string, h store.Holder, ttl time.Duration) (store.Lease, error)
	// Renew extends a lease to ttl (positive) from now if its token is
	// still current; store.ErrLeaseLost if not.
	Renew(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error)
	// Free frees the job's lease if token is still current; nothing if
	// not.
	Free(ctx context.Context, job string, token int64) error
	// Current returns the job's lease and true when it is held and live on
	// the store's clock.
	Current(ctx context.Context, job string) (store.Lease, bool, error)
	// Now is the store's clock.
	Now(ctx context.Context) (time.Time, error)
}

// AcquireLease takes the job's lease if it is free or expired on the
// store's clock; of several processes racing for it exactly one wins, the
// others get a *store.LeaseHeldError naming the winner.
func (c *Core) AcquireLease(ctx context.Context, job string, h store.Holder, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("acquiring lease of job %q: ttl %s is not positive", job, ttl)
	}
	l, err := c.l.Acquire(ctx, job, h, ttl)
	var held *store.LeaseHeldError
	if errors.As(err, &held) {
		return store.Lease{}, err
	}
	if err != nil {
		return store.Lease{}, c.failf(err, "acquiring lease of job %q", job)
	}
	return l, nil
}

// RenewLease extends the lease to ttl from now on the store's clock if
// l.Token is still the job's current token (even if the lease expired
// meanwhile, as long as no one else took it).
func (c *Core) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("renewing lease of job %q: ttl %s is not positive", l.Job, ttl)
	}
	l, err := c.l.Renew(ctx, l, ttl)
	if err != nil {
		return store.Lease{}, c.failf(err, "renewing lease of job %q", l.Job)
	}
	return l, nil
}

// ReleaseLease frees the lease if l.Token is current. The token counter
// stays, so the next acquisition gets a larger token.
func (c *Core) ReleaseLease(ctx context.Context, l store.Lease) error {
	if err := c.l.Free(ctx, l.Job, l.Token); err != nil {
		return c.failf(err, "releasing lease of job %q", l.Job)
	}
	return nil
}

// BreakLease frees the job's lease if it still has token.
func (c *Core) BreakLease(ctx context.Context, job string, token int64) error {
	if err := c.l.Free(ctx, job, token); err != nil {
		return c.failf(err, "breaking lease of job %q", job)
	}
	return nil
}

// CurrentLease returns the job's lease when it is held and live on the
// store's clock (store.LeaseReader).
func (c *Core) CurrentLease(ctx context.Context, job string) (store.Lease, bool, error) {
	l, live, err := c.l.Current(ctx, job)
	if err != nil {
		return store.Lease{}, false, c.failf(err, "reading lease of job %q", job)
	}
	if !live {
		return store.Lease{}, false, nil
	}
	return l, true, nil
}

// Now returns the store's clock, which judges lease expiry.
func (c *Core) Now(ctx context.Context) (time.Time, error) {
	now, err := c.l.Now(ctx)
	if err != nil {
		return time.Time{}, c.d.Fail("reading the store's clock", err)
	}
	return now.UTC(), nil
}
