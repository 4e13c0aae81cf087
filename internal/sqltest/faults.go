package sqltest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Held is a transaction kept open on its own connection, for late-commit
// scenarios: rows it writes stay invisible to others until Commit.
type Held struct {
	tb   testing.TB
	conn *sql.Conn
	tx   *sql.Tx
}

// Hold begins a transaction on a connection of its own. It is rolled back
// when the test ends unless committed.
func (d *DB) Hold(tb testing.TB) *Held {
	tb.Helper()
	ctx := context.Background()
	conn, err := d.SQL.Conn(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	h := &Held{tb: tb, conn: conn, tx: tx}
	tb.Cleanup(func() {
		_ = h.tx.Rollback()
		_ = h.conn.Close()
	})
	return h
}

// Exec runs a statement inside the held transaction.
func (h *Held) Exec(query string, args ...any) {
	h.tb.Helper()
	if _, err := h.tx.Exec(query, args...); err != nil {
		h.tb.Fatalf("held transaction: %v\nstatement: %s", err, query)
	}
}

// Commit commits the held transaction.
func (h *Held) Commit() {
	h.tb.Helper()
	if err := h.tx.Commit(); err != nil {
		h.tb.Fatalf("committing held transaction: %v", err)
	}
}

// KillQuery kills the server session that runs a statement containing
// match (case-insensitive), other than the asking one, waiting up to
// timeout for it to appear: pg_terminate_backend on PostgreSQL, KILL on
// MySQL/MariaDB. It reports whether a session was killed.
func (d *DB) KillQuery(tb testing.TB, match string, timeout time.Duration) bool {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		var ids []int64
		var q string
		switch d.Kind {
		case sqldb.Postgres:
			q = `SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()
				AND state = 'active' AND position(lower($1) in lower(query)) > 0`
		case sqldb.MySQL:
			q = `SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND DB = DATABASE()
				AND INSTR(LOWER(INFO), LOWER(?)) > 0`
		default:
			tb.Fatalf("KillQuery: not possible on %s", d.Kind)
		}
		rows, err := d.SQL.Query(q, match)
		if err != nil {
			tb.Fatal(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				tb.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		for _, id := range ids {
			var err error
			if d.Kind == sqldb.Postgres {
				_, err = d.SQL.Exec("SELECT pg_terminate_backend($1)", id)
			} else {
				_, err = d.SQL.Exec("KILL ?", id)
			}
			if err != nil && !strings.Contains(err.Error(), "Unknown thread") {
				tb.Fatalf("killing session %d: %v", id, err)
			}
		}
		if len(ids) > 0 {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}
