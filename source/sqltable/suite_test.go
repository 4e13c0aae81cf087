package sqltable_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
	"github.com/tidemark-etl/tidemark/source/sourcetest"
)

// TestSuite runs the source suite on a table in PostgreSQL,
// MySQL/MariaDB and SQLite, with the state in each shipped store.
func TestSuite(t *testing.T) {
	stores := sinktest.Stores(t, nil)
	for _, kind := range sqltest.Kinds {
		t.Run(kind.String(), func(t *testing.T) {
			db := sqltest.New(t, kind)
			n := 0
			sourcetest.Run(t, sourcetest.Kind{Engine: openEngine, New: func(t *testing.T) sourcetest.Input {
				n++
				return table(t, db, fmt.Sprintf("in_%d", n))
			}}, stores)
		})
	}
}

func openEngine(t *testing.T) engine.Engine {
	t.Helper()
	e, err := duckdb.New(duckdb.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// table is a table name in db keyed by id, and another of the same
// columns for the changed definition.
func table(t *testing.T, db *sqltest.DB, name string) sourcetest.Input {
	t.Helper()
	for _, n := range []string{name, name + "_other"} {
		db.Exec(t, ddl(db.Kind, "CREATE TABLE "+db.Q(n)+" (id {pk}, v {text})"))
	}
	block := func(table string) func(ctx string) string {
		return func(ctx string) string {
			b := fmt.Sprintf("  - ctx: %s\n    connection: %s\n    table: %s", ctx, db.Connection, table)
			if db.PasswordEnv != "" {
				b += "\n    password_env: " + db.PasswordEnv
			}
			return b
		}
	}
	var last []string // the ids the last Add inserted
	insert := func(t *testing.T, rows ...string) {
		for _, r := range rows {
			id, v, _ := strings.Cut(r, ":")
			db.Exec(t, "INSERT INTO "+db.Q(name)+" (id, v) VALUES ("+id+", '"+v+"')")
		}
	}
	concat := "CAST(id AS VARCHAR(20)) || ':' || v"
	switch db.Kind {
	case sqldb.MySQL:
		concat = "CONCAT(id, ':', v)"
	case sqldb.SQLite:
		concat = "CAST(id AS TEXT) || ':' || v"
	}
	return sourcetest.Input{
		Block:   block(name),
		Changed: block(name + "_other"),
		Add: func(t *testing.T, rows ...string) {
			last = last[:0]
			for _, r := range rows {
				id, _, _ := strings.Cut(r, ":")
				last = append(last, id)
			}
			insert(t, rows...)
		},
		Modify: insert,
		Remove: func(t *testing.T) {
			db.Exec(t, "DELETE FROM "+db.Q(name)+" WHERE id IN ("+strings.Join(last, ", ")+")")
		},
		Snapshot: func(t *testing.T) string {
			return strings.Join(db.Strings(t, "SELECT "+concat+" FROM "+db.Q(name)+" ORDER BY id"), " ")
		},
	}
}
