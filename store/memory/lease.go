package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// AcquireLease takes the job's lease if it is free or expired on the
// store's clock, with the next fencing token.
func (s *Store) AcquireLease(_ context.Context, job string, h store.Holder, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("acquiring lease of job %q: ttl %s is not positive", job, ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	j := s.job(job)
	if cur := j.lease; cur != nil && cur.Expires.After(now) {
		return store.Lease{}, &store.LeaseHeldError{Job: job, Token: cur.Token, Holder: cur.Holder, Expires: cur.Expires}
	}
	if h.Started.IsZero() {
		h.Started = now
	}
	h.Started = utc(h.Started)
	j.lastToken++
	l := store.Lease{Job: job, Token: j.lastToken, Holder: h, Expires: now.Add(ttl)}
	j.lease = &l
	return l, nil
}

// RenewLease extends the lease to ttl from now on the store's clock if
// l.Token is still current (even if it expired meanwhile, as long as no one
// else took it).
func (s *Store) RenewLease(_ context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("renewing lease of job %q: ttl %s is not positive", l.Job, ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.job(l.Job)
	if err := j.checkToken(l.Job, l.Token); err != nil {
		return store.Lease{}, fmt.Errorf("renewing lease of job %q: %w", l.Job, err)
	}
	j.lease.Expires = s.clock().Add(ttl)
	l.Expires = j.lease.Expires
	return l, nil
}

// ReleaseLease frees the lease if l.Token is current. The token counter
// stays, so the next acquisition gets a larger token.
func (s *Store) ReleaseLease(_ context.Context, l store.Lease) error {
	return s.BreakLease(context.Background(), l.Job, l.Token)
}

// BreakLease frees the job's lease if it still has token.
func (s *Store) BreakLease(_ context.Context, job string, token int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[job]; ok && j.lease != nil && j.lease.Token == token {
		j.lease = nil
	}
	return nil
}

// checkToken returns store.ErrLeaseLost unless token is the token of the
// job's lease. Expiry alone does not fence a run out: only another
// acquisition or a release does. s.mu is held.
func (j *jobState) checkToken(job string, token int64) error {
	if j.lease == nil {
		return fmt.Errorf("token %d: job %q has no lease: %w", token, job, store.ErrLeaseLost)
	}
	if j.lease.Token != token {
		return fmt.Errorf("token %d is stale, %s holds token %d: %w", token, j.lease.Holder.ID, j.lease.Token, store.ErrLeaseLost)
	}
	return nil
}
