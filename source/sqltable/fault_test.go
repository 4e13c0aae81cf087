package sqltable_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// TestKilledMidRead kills the server session while Extract reads, then
// reads again: the error names the table and what was being done, the
// password never shows, and the rerun (same cursor) reads every row.
func TestKilledMidRead(t *testing.T) {
	sqltest.EachOf(t, []sqldb.Kind{sqldb.Postgres, sqldb.MySQL}, func(t *testing.T, db *sqltest.DB) {
		// A view through a function that the test turns slow on one row,
		// after planning, so the kill lands in the middle of the read.
		fn := map[sqldb.Kind]struct{ fast, slow, cond string }{
			sqldb.Postgres: {
				"CREATE OR REPLACE FUNCTION slow(i bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $$ SELECT true $$",
				"CREATE OR REPLACE FUNCTION slow(i bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$ BEGIN IF i = 5000 THEN PERFORM pg_sleep(60); END IF; RETURN true; END $$",
				"slow(id)",
			},
			sqldb.MySQL: {
				"CREATE OR REPLACE FUNCTION slow(i BIGINT) RETURNS INT NOT DETERMINISTIC RETURN 1",
				"CREATE OR REPLACE FUNCTION slow(i BIGINT) RETURNS INT NOT DETERMINISTIC RETURN IF(i = 5000, SLEEP(60), 0) + 1",
				"slow(id) > 0",
			},
		}[db.Kind]
		db.Exec(t, ddl(db.Kind, "CREATE TABLE base (id {pk}, v {text})"))
		fill(t, db, "base", 10000)
		db.Exec(t, fn.fast)
		db.Exec(t, "CREATE VIEW slow_orders AS SELECT id, v FROM base WHERE "+fn.cond)
		s := open(t, db, sqltable.Config{Table: "slow_orders", BookmarkKeys: []string{"id"}})
		ctx := ctxTimeout(t)
		p, err := s.Plan(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Exec(t, fn.slow)
		done := make(chan error, 1)
		go func() {
			_, err := p.Extract(ctx, t.TempDir())
			done <- err
		}()
		if !db.KillQuery(t, "slow_orders", 20*time.Second) {
			t.Fatal("the read never showed up in the server's session list")
		}
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Extract did not return after its session was killed")
		}
		if err == nil {
			t.Fatal("Extract succeeded although its session was killed")
		}
		msg := err.Error()
		t.Logf("error: %s", msg)
		for _, want := range []string{"source src", "table slow_orders", "reading rows"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if strings.Contains(msg, db.Password) {
			t.Errorf("error %q shows the password", msg)
		}
		db.Exec(t, fn.fast)
		r := step(t, s, nil)
		if len(r.rows) != 10000 {
			t.Fatalf("rerun read %d rows, want 10000", len(r.rows))
		}
	})
}

// fill inserts rows 1..n into table (id, v) in batches.
func fill(t *testing.T, db *sqltest.DB, table string, n int) {
	t.Helper()
	for start := 1; start <= n; start += 1000 {
		var vals []string
		for i := start; i < start+1000 && i <= n; i++ {
			vals = append(vals, fmt.Sprintf("(%d, 'value %d')", i, i))
		}
		db.Exec(t, "INSERT INTO "+db.Q(table)+" (id, v) VALUES "+strings.Join(vals, ", "))
	}
}
