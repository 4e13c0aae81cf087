// Package sqlstore is the state store's SQL implementation: the queries and
// the rules of store.Store over one SQL schema, of which store/sqlite and
// store/postgres are dialects. A dialect gives what truly differs: its
// driver and connections, its transactions (SQLite's BEGIN IMMEDIATE, a
// PostgreSQL lease row locked FOR UPDATE), its placeholders, a few
// statements in its own syntax (upserts, locks, list parameters), its
// schema and migrations, its error texts and its clock.
//
// The core writes every statement with '?' placeholders; a dialect's
// Querier rewrites them to its own.
package sqlstore

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoRows is what a Row's Scan returns when the query found no row; a
// dialect's Querier maps its driver's error to it.
var ErrNoRows = errors.New("no rows in result set")

// Querier runs statements on a connection or inside a transaction. Queries
// are written with '?' placeholders.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	// Query runs a query; the caller closes the rows.
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow runs a query for one row; Scan returns ErrNoRows for none.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows is the result of Query.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is the result of QueryRow.
type Row interface {
	Scan(dest ...any) error
}

// Dialect is what one SQL database gives the core.
type Dialect interface {
	// DB runs single statements outside a transaction.
	DB() Querier
	// Read runs fn in a read-only transaction: one snapshot across its
	// statements.
	Read(ctx context.Context, fn func(q Querier) error) error
	// Stream runs query in a read-only snapshot and calls each for every
	// row until it returns false or an error, without holding every row at
	// once. Its error is the query's or each's.
	Stream(ctx context.Context, query string, args []any, each func(Row) (bool, error)) error
	// InRuns returns a condition on column that holds for the run ids
	// given, with its one parameter's value (SQLite: a JSON array;
	// PostgreSQL: a text array).
	InRuns(column string, runIDs []string) (cond string, arg any)
	// RunColumns is the column list of runs that scanRun reads: job,
	// run_id, seq, attempt, mode, status, started_at, finished_at (Unix ns;
	// NULL or 0 while running), version, undone, purged, summary (JSON),
	// error, job_file ('' where the summary keeps it), host.
	RunColumns() string
	// Bool is a boolean literal as the dialect's schema compares it (so
	// that a condition matches a partial index's).
	Bool(b bool) string
	// Fail wraps err with what was being done (and where, with secrets
	// masked, for a store that is not a local file).
	Fail(what string, err error) error
}

// Core implements the store.Store methods that are the same SQL on every
// dialect. A dialect's Store embeds it.
type Core struct {
	d Dialect
}

// New returns the core over a dialect.
func New(d Dialect) *Core { return &Core{d: d} }

// failf is Fail with a formatted description.
func (c *Core) failf(err error, format string, args ...any) error {
	return c.d.Fail(fmt.Sprintf(format, args...), err)
}
