package objcore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// errNoChange ends a head update without writing: the head is already as
// the caller wants it.
var errNoChange = errors.New("no change")

// AcquireLease takes the job's lease if it is free or expired on the
// server's clock (see expired), with the next fencing token, by a swap of
// the job's head.
func (s *Store) AcquireLease(ctx context.Context, job string, holder store.Holder, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("acquiring lease of job %q: ttl %s is not positive", job, ttl)
	}
	var l store.Lease
	_, err := s.updateHead(ctx, job, func(h *headObj) error {
		if cur := h.Lease; cur != nil {
			gone, err := s.b.Expired(ctx, cur.Expires)
			if err != nil {
				return err
			}
			if !gone {
				return &store.LeaseHeldError{Job: job, Token: cur.Token, Holder: cur.Holder, Expires: cur.Expires}
			}
		}
		now, err := s.Now(ctx)
		if err != nil {
			return err
		}
		hd := holder
		if hd.Started.IsZero() {
			hd.Started = now
		}
		hd.Started = utc(hd.Started)
		h.LastToken++
		h.Lease = &leaseObj{Token: h.LastToken, Holder: hd, Expires: now.Add(ttl)}
		l = store.Lease{Job: job, Token: h.LastToken, Holder: hd, Expires: h.Lease.Expires}
		return nil
	})
	if err != nil {
		var held *store.LeaseHeldError
		if errors.As(err, &held) {
			return store.Lease{}, err
		}
		return store.Lease{}, fmt.Errorf("acquiring lease of job %q in %s: %w", job, s.root, err)
	}
	return l, nil
}

// RenewLease extends the lease to ttl from now on the server's clock if
// l.Token is still current (even if it expired meanwhile, as long as no
// one else took it).
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("renewing lease of job %q: ttl %s is not positive", l.Job, ttl)
	}
	_, err := s.updateHead(ctx, l.Job, func(h *headObj) error {
		if err := h.checkToken(l.Token); err != nil {
			return err
		}
		now, err := s.Now(ctx)
		if err != nil {
			return err
		}
		h.Lease.Expires = now.Add(ttl)
		l.Expires = h.Lease.Expires
		return nil
	})
	if err != nil {
		return store.Lease{}, fmt.Errorf("renewing lease of job %q in %s: %w", l.Job, s.root, err)
	}
	return l, nil
}

// ReleaseLease frees the lease if l.Token is current. The head keeps the
// last token, so the next acquisition gets a larger one.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	return s.BreakLease(ctx, l.Job, l.Token)
}

// BreakLease frees the job's lease if it still has token.
func (s *Store) BreakLease(ctx context.Context, job string, token int64) error {
	_, err := s.updateHead(ctx, job, func(h *headObj) error {
		if h.Lease == nil || h.Lease.Token != token {
			return errNoChange
		}
		h.Lease = nil
		return nil
	})
	if err != nil && !errors.Is(err, errNoChange) {
		return fmt.Errorf("freeing lease of job %q in %s: %w", job, s.root, err)
	}
	return nil
}

// CurrentLease returns the job's lease if one is held and not expired on
// the server's clock (store.LeaseReader).
func (s *Store) CurrentLease(ctx context.Context, job string) (store.Lease, bool, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return store.Lease{}, false, fmt.Errorf("reading lease of job %q in %s: %w", job, s.root, err)
	}
	if h.Lease == nil {
		return store.Lease{}, false, nil
	}
	gone, err := s.b.Expired(ctx, h.Lease.Expires)
	if err != nil || gone {
		return store.Lease{}, false, err
	}
	return store.Lease{Job: job, Token: h.Lease.Token, Holder: h.Lease.Holder, Expires: h.Lease.Expires}, true, nil
}
