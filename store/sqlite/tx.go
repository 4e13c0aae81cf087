package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// write runs fn in a write transaction. The DSN's _txlock=immediate makes it
// BEGIN IMMEDIATE: the write lock is taken (waiting under busy_timeout) before
// fn reads anything, so what fn checks cannot change before it writes, and a
// read-then-write never fails with SQLITE_BUSY halfway.
func (s *legacy) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// read runs fn in a read transaction (a plain BEGIN: one consistent snapshot
// that does not block writers in WAL mode).
func (s *legacy) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// nanos stores a time as Unix nanoseconds; the zero time is stored as 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNanos is the inverse of nanos; it returns UTC times.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// boolInt stores a bool as SQLite's 0 or 1.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
