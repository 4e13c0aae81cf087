package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// runColumns is the column list of runs that sqlstore reads.
const runColumns = `job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, job_file, host`

// leases is PostgreSQL's lease table (sqlstore.Leaser): one row per job
// that ever took its lease, kept when it is released (held false), so that
// its token grows across release and re-acquire. Expiry is judged by the
// database's clock (clock_timestamp()), never the client's.
type leases struct{ s *legacy }

// dialect is PostgreSQL's part of sqlstore.
type dialect struct{ s *legacy }

var (
	_ sqlstore.Dialect = dialect{}
	_ sqlstore.Leaser  = leases{}
)

func (d dialect) DB() sqlstore.Querier { return pgQ(d.s.pool) }

func (d dialect) Read(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return d.s.readTx(ctx, func(tx pgx.Tx) error { return fn(pgQ(tx)) })
}

func (d dialect) Stream(ctx context.Context, query string, args []any, each func(sqlstore.Row) (bool, error)) error {
	return d.s.cursor(ctx, sqlstore.Numbered(query), args, func(rows pgx.Rows) (bool, error) { return each(rows) })
}

// InRuns passes the run ids as one text array.
func (d dialect) InRuns(column string, runIDs []string) (string, any) {
	return column + ` = ANY(?::text[])`, runIDs
}

func (d dialect) RunColumns() string { return runColumns }

func (d dialect) Bool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func (d dialect) Fail(what string, err error) error { return d.s.fail(what, err) }

// pgConn is what the pool and a transaction share.
type pgConn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
}

// pgQ is a sqlstore.Querier over pgx: '?' placeholders become $n.
func pgQ(c pgConn) sqlstore.Querier { return pgQuerier{c} }

type pgQuerier struct{ c pgConn }

func (q pgQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.c.Exec(ctx, sqlstore.Numbered(query), args...)
	return tag.RowsAffected(), err
}

func (q pgQuerier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	return q.c.Query(ctx, sqlstore.Numbered(query), args...)
}

func (q pgQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return pgRow{q.c.QueryRow(ctx, sqlstore.Numbered(query), args...)}
}

// ExecEach sends the statements as one batch (one round trip).
func (q pgQuerier) ExecEach(ctx context.Context, query string, args [][]any) ([]int64, error) {
	if len(args) == 0 {
		return nil, nil
	}
	query = sqlstore.Numbered(query)
	b := &pgx.Batch{}
	for _, a := range args {
		b.Queue(query, a...)
	}
	br := q.c.SendBatch(ctx, b)
	n := make([]int64, len(args))
	for i := range args {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return nil, &sqlstore.RowError{Row: i, Err: err}
		}
		n[i] = tag.RowsAffected()
	}
	return n, br.Close()
}

// CopyFrom inserts with COPY (100k file records in about a second).
func (q pgQuerier) CopyFrom(ctx context.Context, table string, columns []string, n int, row func(i int) []any) error {
	i := 0
	_, err := q.c.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromFunc(func() ([]any, error) {
		if i == n {
			return nil, nil
		}
		i++
		return row(i - 1), nil
	}))
	return err
}

type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

// streamPage is how many rows a stream fetches from its cursor at a time:
// what a stream holds in memory, however many rows the query has.
const streamPage = 2000

// cursor calls each for the rows of query, from one snapshot: the query
// runs as a cursor in a read-only transaction and is fetched streamPage
// rows at a time, so that a million rows are never held at once. each
// returning false closes the cursor without reading the rest (a plain
// query would drain it).
func (s *legacy) cursor(ctx context.Context, query string, args []any, each func(pgx.Rows) (bool, error)) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// A stream locks no rows, and its reader may take its time between
	// pages: the idle-transaction timeout meant for writes is lifted.
	if _, err := tx.Exec(ctx, `SET LOCAL idle_in_transaction_session_timeout = 0`); err != nil {
		return err
	}
	// The cursor is named after the query, so that the FETCH statement
	// pgx prepares and caches has one shape of result.
	h := fnv.New64a()
	h.Write([]byte(query))
	name := fmt.Sprintf("tidemark_%x", h.Sum64())
	if _, err := tx.Exec(ctx, `DECLARE `+name+` NO SCROLL CURSOR FOR `+query, args...); err != nil {
		return err
	}
	for {
		rows, err := tx.Query(ctx, fmt.Sprintf(`FETCH %d FROM %s`, streamPage, name))
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			n++
			more, err := each(rows)
			if err != nil || !more {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n < streamPage {
			return nil
		}
	}
}

var _ store.Importer = (*legacy)(nil)

// Write runs fn in one read-committed transaction (Store.write).
func (d dialect) Write(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return d.s.write(ctx, func(tx pgx.Tx) error { return fn(pgQ(tx)) })
}

// LockLease locks the job's lease row (lockLease): the one row every
// write of the job locks first, and nothing wider.
func (d dialect) LockLease(ctx context.Context, q sqlstore.Querier, job string, token int64) error {
	return lockLease(ctx, q.(pgQuerier).c, job, token)
}

// Clock is the database's clock, which judges lease expiry.
func (d dialect) Clock(ctx context.Context, q sqlstore.Querier) (time.Time, error) {
	var now time.Time
	err := q.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now)
	return now.UTC(), err
}

// NextRun reads both from the newest end of the (job, seq) index,
// whatever the job's history: Seq from its greatest entry, Attempt from
// the newest run that finished (its attempt + 1 if it failed, else 1).
// Counting the failed runs above the last success instead left the plan
// to the planner's estimates, and near a tie it scanned every run of the
// job.
func (d dialect) NextRun(ctx context.Context, q sqlstore.Querier, job string) (seq int64, attempt int, err error) {
	err = q.QueryRow(ctx, `
		WITH last AS (
			SELECT status, attempt FROM runs WHERE job = $1 AND status <> 'running' ORDER BY seq DESC LIMIT 1)
		SELECT coalesce((SELECT max(seq) FROM runs WHERE job = $1), 0) + 1,
			coalesce((SELECT attempt + 1 FROM last WHERE status = 'failed'), 1)`, job).Scan(&seq, &attempt)
	return seq, attempt, err
}

// RowLock locks the run's row for the rest of the transaction.
func (d dialect) RowLock() string { return " FOR UPDATE" }

// Schema: a running run's finished_at and an output's missing target are
// NULL, ranges are bytea, and runs has a job_file column.
func (d dialect) Schema() sqlstore.Schema {
	return sqlstore.Schema{JobFileColumn: true, NoTime: nil, NoTarget: nil, TextRange: false}
}

// ApplyCatalog stamps with the database's clock in SQL; now is not needed.
func (d dialect) ApplyCatalog(ctx context.Context, q sqlstore.Querier, c catalog.Changes, _ time.Time) error {
	return applyCatalog(ctx, q.(pgQuerier).c, c)
}

// LockJob locks the job's lease row, if it has one, for an import.
func (d dialect) LockJob(ctx context.Context, q sqlstore.Querier, job string) error {
	_, err := q.Exec(ctx, `SELECT 1 FROM leases WHERE job = ? FOR UPDATE`, job)
	return err
}
