package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// runColumns is the column list of runs that sqlstore reads: the job file
// lives inside the summary here.
const runColumns = `job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, '', host`

// leases is SQLite's lease table (sqlstore.Leaser): a row per held lease,
// deleted on release, and each job's last token in lease_tokens, which
// outlives the row so that tokens grow across release and re-acquire.
type leases struct{ s *legacy }

// dialect is SQLite's part of sqlstore.
type dialect struct{ s *legacy }

var (
	_ sqlstore.Dialect  = dialect{}
	_ sqlstore.Leaser   = leases{}
	_ store.LeaseReader = (*legacy)(nil)
)

func (d dialect) DB() sqlstore.Querier { return sqlstore.SQL(d.s.db) }

func (d dialect) Read(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return d.s.read(ctx, func(tx *sql.Tx) error { return fn(sqlstore.SQL(tx)) })
}

// Stream runs one query: in WAL mode a statement reads one snapshot.
func (d dialect) Stream(ctx context.Context, query string, args []any, each func(sqlstore.Row) (bool, error)) error {
	rows, err := d.s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		more, err := each(rows)
		if err != nil || !more {
			return err
		}
	}
	return rows.Err()
}

// InRuns passes the run ids as one JSON array.
func (d dialect) InRuns(column string, runIDs []string) (string, any) {
	ids, _ := json.Marshal(runIDs) // a []string always encodes
	return column + ` IN (SELECT value FROM json_each(?))`, string(ids)
}

func (d dialect) RunColumns() string { return runColumns }

// Bool is 0 or 1: the schema keeps booleans as integers.
func (d dialect) Bool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (d dialect) Fail(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }

var _ store.Importer = (*legacy)(nil)

// Write runs fn in a BEGIN IMMEDIATE transaction (Store.write): SQLite's
// write lock serialises every write, so the lease check and what follows
// cannot be interleaved with another process's.
func (d dialect) Write(ctx context.Context, fn func(sqlstore.Querier) error) error {
	return d.s.write(ctx, func(tx *sql.Tx) error { return fn(sqlstore.SQL(tx)) })
}

func (d dialect) LockLease(ctx context.Context, q sqlstore.Querier, job string, token int64) error {
	return checkToken(ctx, sqlstore.SQLConnOf(q), job, token)
}

// Clock is the host's clock (Store.Now).
func (d dialect) Clock(context.Context, sqlstore.Querier) (time.Time, error) { return time.Now(), nil }

// NextRun counts the failed runs above the job's last succeeded one.
func (d dialect) NextRun(ctx context.Context, q sqlstore.Querier, job string) (seq int64, attempt int, err error) {
	err = q.QueryRow(ctx, `
		SELECT
			(SELECT coalesce(max(seq), 0) + 1 FROM runs WHERE job = ?1),
			(SELECT count(*) + 1 FROM runs WHERE job = ?1 AND status = 'failed' AND seq >
				(SELECT coalesce(max(seq), 0) FROM runs WHERE job = ?1 AND status = 'succeeded'))`,
		job).Scan(&seq, &attempt)
	return seq, attempt, err
}

// RowLock is empty: the write transaction holds the database's lock.
func (d dialect) RowLock() string { return "" }

// Schema: times and booleans are integers (a running run's finished_at is
// 0), text columns are NOT NULL, and the job file lives in the summary.
func (d dialect) Schema() sqlstore.Schema {
	return sqlstore.Schema{JobFileColumn: false, NoTime: int64(0), NoTarget: "", TextRange: true}
}

func (d dialect) ApplyCatalog(ctx context.Context, q sqlstore.Querier, c catalog.Changes, now time.Time) error {
	return applyCatalog(ctx, sqlstore.SQLConnOf(q), c, now)
}

// LockJob does nothing: the write transaction holds the database's lock.
func (d dialect) LockJob(context.Context, sqlstore.Querier, string) error { return nil }
