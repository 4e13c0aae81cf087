package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store"
)

// AcquireLease takes the job's lease if it is free or expired on the
// database's clock, in one statement: an upsert whose update only happens
// when the lease row is free or expired. Of several hosts racing, exactly
// one wins (the row lock serialises them); the others get a
// *store.LeaseHeldError naming the winner. The client's clock plays no
// part: expiry is clock_timestamp() + ttl on the server.
func (s *Store) AcquireLease(ctx context.Context, job string, h store.Holder, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("acquiring lease of job %q: ttl %s is not positive", job, ttl)
	}
	for range 10 {
		l := store.Lease{Job: job, Holder: h}
		var started, expires time.Time
		err := s.pool.QueryRow(ctx, `
			INSERT INTO leases AS l (job, token, held, holder_id, host, pid, started, expires)
			VALUES ($1, 1, true, $2, $3, $4, coalesce($5, clock_timestamp()), clock_timestamp() + $6::interval)
			ON CONFLICT (job) DO UPDATE SET token = l.token + 1, held = true,
				holder_id = excluded.holder_id, host = excluded.host, pid = excluded.pid,
				started = excluded.started, expires = excluded.expires
			WHERE NOT l.held OR l.expires <= clock_timestamp()
			RETURNING token, started, expires`,
			job, h.ID, h.Host, h.PID, ts(h.Started), ttl).Scan(&l.Token, &started, &expires)
		if err == nil {
			l.Holder.Started, l.Expires = started.UTC(), expires.UTC()
			return l, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Lease{}, s.fail(fmt.Sprintf("acquiring lease of job %q", job), err)
		}
		cur, live, err := s.lease(ctx, job)
		if err != nil {
			return store.Lease{}, s.fail(fmt.Sprintf("acquiring lease of job %q", job), err)
		}
		if live {
			return store.Lease{}, &store.LeaseHeldError{Job: job, Token: cur.Token, Holder: cur.Holder, Expires: cur.Expires}
		}
		// Released or expired between the two statements: try again.
	}
	return store.Lease{}, s.fail(fmt.Sprintf("acquiring lease of job %q", job), errors.New("the lease changed hands ten times while it was being taken"))
}

// RenewLease extends the lease to ttl from now on the database's clock if
// l.Token is still the job's held token (even if it expired meanwhile, as
// long as no one else took it).
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if ttl <= 0 {
		return store.Lease{}, fmt.Errorf("renewing lease of job %q: ttl %s is not positive", l.Job, ttl)
	}
	var expires time.Time
	err := s.pool.QueryRow(ctx, `
		UPDATE leases SET expires = clock_timestamp() + $3::interval
		WHERE job = $1 AND token = $2 AND held RETURNING expires`, l.Job, l.Token, ttl).Scan(&expires)
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("token %d is not the job's current lease: %w", l.Token, store.ErrLeaseLost)
	}
	if err != nil {
		return store.Lease{}, s.fail(fmt.Sprintf("renewing lease of job %q", l.Job), err)
	}
	l.Expires = expires.UTC()
	return l, nil
}

// ReleaseLease frees the lease if l.Token is current. The row stays with
// its token, so the next acquisition gets a larger one.
func (s *Store) ReleaseLease(ctx context.Context, l store.Lease) error {
	if err := s.free(ctx, l.Job, l.Token); err != nil {
		return s.fail(fmt.Sprintf("releasing lease of job %q", l.Job), err)
	}
	return nil
}

// BreakLease frees the job's lease if it still has token.
func (s *Store) BreakLease(ctx context.Context, job string, token int64) error {
	if err := s.free(ctx, job, token); err != nil {
		return s.fail(fmt.Sprintf("breaking lease of job %q", job), err)
	}
	return nil
}

func (s *Store) free(ctx context.Context, job string, token int64) error {
	_, err := s.pool.Exec(ctx, `UPDATE leases SET held = false WHERE job = $1 AND token = $2 AND held`, job, token)
	return err
}

// Now returns the database's clock, which judges lease expiry.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, s.fail("reading the database's clock", err)
	}
	return now.UTC(), nil
}

// CurrentLease returns the job's lease when it is held and live on the
// database's clock (store.LeaseReader).
func (s *Store) CurrentLease(ctx context.Context, job string) (store.Lease, bool, error) {
	l, live, err := s.lease(ctx, job)
	if err != nil {
		return store.Lease{}, false, s.fail(fmt.Sprintf("reading lease of job %q", job), err)
	}
	if !live {
		return store.Lease{}, false, nil
	}
	return l, true, nil
}

// lease reads the job's lease; live is false when it is free, released or
// expired on the database's clock.
func (s *Store) lease(ctx context.Context, job string) (l store.Lease, live bool, err error) {
	var started, expires *time.Time
	err = s.pool.QueryRow(ctx, `
		SELECT token, holder_id, host, pid, started, expires, held AND expires > clock_timestamp()
		FROM leases WHERE job = $1`, job).
		Scan(&l.Token, &l.Holder.ID, &l.Holder.Host, &l.Holder.PID, &started, &expires, &live)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Lease{}, false, nil
	}
	if err != nil {
		return store.Lease{}, false, err
	}
	l.Job = job
	l.Holder.Started, l.Expires = utc(started), utc(expires)
	return l, live, nil
}
