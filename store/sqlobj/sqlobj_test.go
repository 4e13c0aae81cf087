package sqlobj

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/objcore/backendtest"
)

// TestSQLite runs the backend suite on a SQLite file of its own per case,
// in WAL mode with a busy timeout, as the sqlite store opens it.
func TestSQLite(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) objcore.Backend {
		path := filepath.Join(t.TempDir(), "state.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=30000&_journal_mode=WAL&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := Create(t.Context(), db, SQLite); err != nil {
			t.Fatal(err)
		}
		return New(db, SQLite, "sqlite://"+path+"/")
	})
}

// TestPostgres runs the backend suite on a fresh database of the test
// server per case.
func TestPostgres(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) objcore.Backend {
		db := sqltest.New(t, sqldb.Postgres)
		if err := Create(t.Context(), db.SQL, Postgres); err != nil {
			t.Fatal(err)
		}
		return New(db.SQL, Postgres, "postgres://test/")
	})
}

// TestListQueryPlan: on SQLite a page of List walks the primary key's
// index in key order: no sort step, no table scan.
func TestListQueryPlan(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Create(t.Context(), db, SQLite); err != nil {
		t.Fatal(err)
	}
	b := New(db, SQLite, "test#")
	query, args := b.listQuery("jobs/a/", "jobs/a/", true, listPage)
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	got := strings.Join(plan, "; ")
	if !strings.Contains(got, "USING INDEX sqlite_autoindex_"+Table) || !strings.Contains(got, "key>? AND key<?") {
		t.Errorf("List query plan %q does not search the primary key's index by range", got)
	}
	if strings.Contains(got, "TEMP B-TREE") || strings.Contains(got, "SCAN") {
		t.Errorf("List query plan %q sorts or scans", got)
	}
}
