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
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
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
	// ExecEach runs one statement once for each row of args and returns
	// how many rows each run changed (a prepared statement, or a batch
	// sent at once).
	ExecEach(ctx context.Context, query string, args [][]any) ([]int64, error)
	// CopyFrom inserts n rows into table's columns in bulk (PostgreSQL's
	// COPY, or a prepared INSERT), asking row for each in turn.
	CopyFrom(ctx context.Context, table string, columns []string, n int, row func(i int) []any) error
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
	// Write runs fn in one write transaction and commits it when fn
	// returns nil; on an error nothing fn wrote stays.
	Write(ctx context.Context, fn func(q Querier) error) error
	// LockLease returns store.ErrLeaseLost unless token is the job's
	// current lease token, inside a Write; where the dialect locks rows,
	// it locks the job's lease row, which serialises the job's writes.
	// Expiry alone does not fence a run out.
	LockLease(ctx context.Context, q Querier, job string, token int64) error
	// Clock is the store's clock (the one that judges lease expiry), read
	// inside q's transaction: it stamps the times a caller leaves zero.
	Clock(ctx context.Context, q Querier) (time.Time, error)
	// NextRun returns the Seq and Attempt of a run the job begins now,
	// inside a Write under the job's lease: Seq one above the job's
	// greatest, Attempt 1 + the failed runs since its last succeeded one
	// (store.NextAttempt).
	NextRun(ctx context.Context, q Querier, job string) (seq int64, attempt int, err error)
	// RowLock is what locks a row read to be updated (" FOR UPDATE"), or
	// "" where the write transaction locks everything.
	RowLock() string
	// Schema says how the schema keeps the values that differ.
	Schema() Schema
	// ApplyCatalog applies catalog changes inside a commit's Write, with
	// the rules of catalog.Store.ApplyCatalog, stamping what it writes
	// with now (the store's clock).
	ApplyCatalog(ctx context.Context, q Querier, c catalog.Changes, now time.Time) error
	// LockJob locks the job's lease row for an import, where the dialect
	// locks rows; the lease stays as it is.
	LockJob(ctx context.Context, q Querier, job string) error
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

// Schema is how a dialect's schema keeps the values that differ.
type Schema struct {
	// JobFileColumn: runs has a job_file column; without it the job file
	// is kept in the summary.
	JobFileColumn bool
	// NoTime is finished_at of a run still running (0 or NULL).
	NoTime any
	// NoTarget is outputs.target of an output that loads no table ('' or
	// NULL).
	NoTarget any
	// TextRange: ranges.range is text, not bytes.
	TextRange bool
}

// Core implements the store.Store methods that are the same SQL on every
// dialect. A dialect's Store embeds it.
type Core struct {
	d Dialect
	l Leaser
}

// New returns the core over a dialect and its lease table.
func New(d Dialect, l Leaser) *Core { return &Core{d: d, l: l} }

// failf is Fail with a formatted description.
func (c *Core) failf(err error, format string, args ...any) error {
	return c.d.Fail(fmt.Sprintf(format, args...), err)
}
