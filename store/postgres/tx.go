package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store"
)

// write runs fn in one read-committed transaction and commits it. A
// connection lost before the commit's answer leaves either all of fn's
// writes or none: PostgreSQL commits a transaction whole or not at all.
func (s *legacy) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// lockLease locks the job's lease row (the one row every write of the job
// locks first) and returns store.ErrLeaseLost unless token is its current,
// held token. Expiry alone does not fence a run out: only another
// acquisition or a release does.
func lockLease(ctx context.Context, tx pgConn, job string, token int64) error {
	var cur int64
	var held bool
	var holder string
	err := tx.QueryRow(ctx, `SELECT token, held, holder_id FROM leases WHERE job = $1 FOR UPDATE`, job).Scan(&cur, &held, &holder)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("token %d: job %q has no lease: %w", token, job, store.ErrLeaseLost)
	case err != nil:
		return fmt.Errorf("reading lease: %w", err)
	case !held:
		return fmt.Errorf("token %d: the lease of job %q was released: %w", token, job, store.ErrLeaseLost)
	case cur != token:
		return fmt.Errorf("token %d is stale, %s holds token %d: %w", token, holder, cur, store.ErrLeaseLost)
	}
	return nil
}

// ts is a time for a timestamptz parameter: nil (NULL) for the zero time,
// so that SQL can put the database's clock in its place.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// utc returns t in UTC with the microsecond precision timestamptz keeps;
// the zero time for nil.
func utc(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// readTx runs fn in a read-only repeatable-read transaction: one snapshot
// across its statements.
func (s *legacy) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(tx)
}
