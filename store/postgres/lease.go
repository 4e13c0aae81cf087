package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store"
)

// Acquire takes the job's lease if it is free or expired on the database's
// clock, in one statement: an upsert whose update only happens when the
// lease row is free or expired. Of several hosts racing, exactly one wins
// (the row lock serialises them). The client's clock plays no part: expiry
// is clock_timestamp() + ttl on the server.
func (ls leases) Acquire(ctx context.Context, job string, h store.Holder, ttl time.Duration) (store.Lease, error) {
	for range 10 {
		l := store.Lease{Job: job, Holder: h}
		var started, expires time.Time
		err := ls.s.pool.QueryRow(ctx, `
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
			return store.Lease{}, err
		}
		cur, live, err := ls.Current(ctx, job)
		if err != nil {
			return store.Lease{}, err
		}
		if live {
			return store.Lease{}, &store.LeaseHeldError{Job: job, Token: cur.Token, Holder: cur.Holder, Expires: cur.Expires}
		}
		// Released or expired between the two statements: try again.
	}
	return store.Lease{}, errors.New("the lease changed hands ten times while it was being taken")
}

// Renew extends the lease to ttl from now on the database's clock if
// l.Token is still the job's held token.
func (ls leases) Renew(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	var expires time.Time
	err := ls.s.pool.QueryRow(ctx, `
		UPDATE leases SET expires = clock_timestamp() + $3::interval
		WHERE job = $1 AND token = $2 AND held RETURNING expires`, l.Job, l.Token, ttl).Scan(&expires)
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("token %d is not the job's current lease: %w", l.Token, store.ErrLeaseLost)
	}
	if err != nil {
		return store.Lease{}, err
	}
	l.Expires = expires.UTC()
	return l, nil
}

// Free marks the lease free if it still has token; the row stays with its
// token, so the next acquisition gets a larger one.
func (ls leases) Free(ctx context.Context, job string, token int64) error {
	_, err := ls.s.pool.Exec(ctx, `UPDATE leases SET held = false WHERE job = $1 AND token = $2 AND held`, job, token)
	return err
}

// Current reads the job's lease; live is false when it is free, released
// or expired on the database's clock.
func (ls leases) Current(ctx context.Context, job string) (l store.Lease, live bool, err error) {
	var started, expires *time.Time
	err = ls.s.pool.QueryRow(ctx, `
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

// Now is the database's clock, which judges lease expiry.
func (ls leases) Now(ctx context.Context) (time.Time, error) {
	var now time.Time
	err := ls.s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now)
	return now, err
}
