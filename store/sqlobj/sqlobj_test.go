package sqlobj

import (
	"database/sql"
	"path/filepath"
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
