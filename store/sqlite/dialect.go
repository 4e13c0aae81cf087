package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// runColumns is the column list of runs that sqlstore reads: the job file
// lives inside the summary here.
const runColumns = `job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, '', host`

// dialect is SQLite's part of sqlstore.
type dialect struct{ s *Store }

var _ sqlstore.Dialect = dialect{}

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
