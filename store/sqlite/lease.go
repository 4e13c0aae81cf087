package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// Acquire takes the job's lease if it is free or expired. The check and
// the write run under SQLite's write lock, so of several processes racing
// for a free lease exactly one wins.
func (ls leases) Acquire(ctx context.Context, job string, h store.Holder, ttl time.Duration) (store.Lease, error) {
	var l store.Lease
	err := ls.s.write(ctx, func(tx *sql.Tx) error {
		now := time.Now()
		cur, ok, err := lease(ctx, tx, job)
		if err != nil {
			return err
		}
		if ok && cur.Expires.After(now) {
			return &store.LeaseHeldError{Job: job, Token: cur.Token, Holder: cur.Holder, Expires: cur.Expires}
		}
		var token int64
		err = tx.QueryRowContext(ctx, `
			INSERT INTO lease_tokens (job, last_token) VALUES (?, 1)
			ON CONFLICT (job) DO UPDATE SET last_token = last_token + 1
			RETURNING last_token`, job).Scan(&token)
		if err != nil {
			return err
		}
		if h.Started.IsZero() {
			h.Started = now
		}
		h.Started = h.Started.UTC()
		l = store.Lease{Job: job, Token: token, Holder: h, Expires: now.Add(ttl).UTC()}
		_, err = tx.ExecContext(ctx, `
			INSERT OR REPLACE INTO leases (job, token, holder_id, host, pid, started, expires)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			job, token, h.ID, h.Host, h.PID, nanos(h.Started), nanos(l.Expires))
		return err
	})
	if err != nil {
		return store.Lease{}, err
	}
	l.Holder.Started = fromNanos(nanos(l.Holder.Started))
	return l, nil
}

// Renew extends the lease if l.Token is still the token of the job's row.
func (ls leases) Renew(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	expires := time.Now().Add(ttl).UTC()
	err := ls.s.write(ctx, func(tx *sql.Tx) error {
		if err := checkToken(ctx, tx, l.Job, l.Token); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE leases SET expires = ? WHERE job = ? AND token = ?`,
			nanos(expires), l.Job, l.Token)
		return err
	})
	if err != nil {
		return store.Lease{}, err
	}
	l.Expires = expires
	return l, nil
}

// Free deletes the lease row if it still has token.
func (ls leases) Free(ctx context.Context, job string, token int64) error {
	return ls.s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE job = ? AND token = ?`, job, token)
		return err
	})
}

// Current reads the job's lease row; live unless it has none or it
// expired on the host's clock.
func (ls leases) Current(ctx context.Context, job string) (store.Lease, bool, error) {
	l, ok, err := lease(ctx, ls.s.db, job)
	if err != nil || !ok || !l.Expires.After(time.Now()) {
		return store.Lease{}, false, err
	}
	return l, true, nil
}

// Now is the host's clock: SQLite is a file on this host, and every
// process sharing it reads the same clock, which judges lease expiry.
func (ls leases) Now(context.Context) (time.Time, error) { return time.Now(), nil }

// lease reads the job's lease row; ok is false if there is none.
func lease(ctx context.Context, q querier, job string) (l store.Lease, ok bool, err error) {
	var started, expires int64
	err = q.QueryRowContext(ctx, `
		SELECT token, holder_id, host, pid, started, expires FROM leases WHERE job = ?`, job).
		Scan(&l.Token, &l.Holder.ID, &l.Holder.Host, &l.Holder.PID, &started, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Lease{}, false, nil
	}
	if err != nil {
		return store.Lease{}, false, fmt.Errorf("reading lease: %w", err)
	}
	l.Job = job
	l.Holder.Started = fromNanos(started)
	l.Expires = fromNanos(expires)
	return l, true, nil
}

// checkToken returns store.ErrLeaseLost unless token is the token of the
// job's lease row. Expiry alone does not fence a run out: only another
// acquisition (which replaces the row) or a release does.
func checkToken(ctx context.Context, tx querier, job string, token int64) error {
	cur, ok, err := lease(ctx, tx, job)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("token %d: job %q has no lease: %w", token, job, store.ErrLeaseLost)
	}
	if cur.Token != token {
		return fmt.Errorf("token %d is stale, %s holds token %d: %w", token, cur.Holder.ID, cur.Token, store.ErrLeaseLost)
	}
	return nil
}

// querier is what *sql.DB and *sql.Tx share for reads.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
