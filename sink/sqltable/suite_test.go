package sqltable_test

import (
	"fmt"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
)

// TestSuite runs the sink suite on a table in PostgreSQL and
// MySQL/MariaDB (SQLite is no sink target: "SQL table sinks write
// PostgreSQL or MySQL/MariaDB"), with the state in each shipped store.
func TestSuite(t *testing.T) {
	stores := sinktest.Stores(t, nil)
	for _, kind := range servers {
		t.Run(kind.String(), func(t *testing.T) {
			db := sqltest.New(t, kind)
			n := 0
			sinktest.Run(t, sinktest.Kind{Engine: openDuckDB, New: func(t *testing.T) sinktest.Place {
				n++
				return table(db, fmt.Sprintf("out_%d", n))
			}, Shared: true}, stores)
		})
	}
}

func openDuckDB(t *testing.T) engine.Engine {
	t.Helper()
	e, err := duckdb.New(duckdb.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// table is a table sink location: name in db.
func table(db *sqltest.DB, name string) sinktest.Place {
	stages := func(t *testing.T, runID string) []string {
		// The staging table's name holds the run id, lower-cased, with _
		// for what is not a letter or digit.
		like := "\\_tidemark\\_stage\\_" + sanitize(runID) + "%"
		q := "SELECT table_name FROM information_schema.tables WHERE table_name LIKE '" + like + "'"
		if db.Kind == sqldb.MySQL {
			q += " AND table_schema = DATABASE()"
		}
		return db.Strings(t, q)
	}
	return sinktest.Place{
		Block: func(ctx, mode string) string {
			b := fmt.Sprintf("  - ctx: %s\n    connection: %s\n    table: %s\n    mode: %s", ctx, db.Connection, name, mode)
			if db.PasswordEnv != "" {
				b += "\n    password_env: " + db.PasswordEnv
			}
			return b
		},
		Rows: func(t *testing.T) []string {
			var n int64
			exists := "SELECT count(*) FROM information_schema.tables WHERE table_name = '" + name + "'"
			if db.Kind == sqldb.MySQL {
				exists += " AND table_schema = DATABASE()"
			}
			if n = db.Count(t, exists); n == 0 {
				return nil
			}
			concat := "CAST(id AS VARCHAR(20)) || ':' || coalesce(v, '')"
			if db.Kind == sqldb.MySQL {
				concat = "CONCAT(id, ':', coalesce(v, ''))"
			}
			return db.Strings(t, "SELECT "+concat+" FROM "+db.Q(name))
		},
		Staged: stages,
		Lose: func(t *testing.T, runID string) {
			for _, s := range stages(t, runID) {
				db.Exec(t, "DROP TABLE "+db.Q(s))
			}
		},
	}
}

func sanitize(runID string) string {
	b := []byte(runID)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			b[i] = '_'
		}
	}
	if len(b) > 32 {
		b = b[:32]
	}
	s := ""
	for _, c := range b {
		if c == '_' {
			s += "\\_"
		} else {
			s += string(c)
		}
	}
	return s
}
