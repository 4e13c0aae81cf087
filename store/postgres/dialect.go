package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// runColumns is the column list of runs that sqlstore reads.
const runColumns = `job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, job_file, host`

// dialect is PostgreSQL's part of sqlstore.
type dialect struct{ s *Store }

var _ sqlstore.Dialect = dialect{}

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
func (s *Store) cursor(ctx context.Context, query string, args []any, each func(pgx.Rows) (bool, error)) error {
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
