package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestSQLPlan: `plan` says how many rows the next run would read from a SQL
// table source, and changes nothing: the run after it reads them.
func TestSQLPlan(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{})
		f.mustRun()
		f.insertOrders(idRange(11, 17)...)

		r := f.tidemark(nil, "plan", f.jobPath, "--json")
		if r.code != 0 {
			t.Fatalf("plan --json: got exit %d, want 0\n%v", r.code, r)
		}
		var p struct {
			Sources map[string]map[string]json.RawMessage `json:"sources"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("plan --json: %v\n%v", err, r)
		}
		src := p.Sources["orders_db"]
		got := ""
		for _, k := range []string{"rows", "new_rows"} {
			if v, ok := src[k]; ok {
				got = string(v)
			}
		}
		if got != "7" {
			t.Errorf("plan --json: sources.orders_db has no rows (or new_rows) = 7 for the 7 rows the next run reads\n%v", r)
		}
		h := f.tidemark(nil, "plan", f.jobPath)
		if h.code != 0 || !strings.Contains(h.output(), "7 rows") && !strings.Contains(h.output(), "new_rows=7") {
			t.Errorf("plan: got exit %d and no mention of the 7 rows the next run reads from orders_db\n%v", h.code, h)
		}

		s := f.mustRun()
		assertIDSet(t, "the run after plan", f.fileIDsOfRun(s.RunID), idRange(11, 17))
	})
}

// TestSQLSourceChanged: a ctx whose table, keys or sort order changed is
// reported (exit 2, naming the ctx), not read with a cursor that does not
// fit; after `bookmark reset` the run starts over with the new definition.
func TestSQLSourceChanged(t *testing.T) {
	t.Parallel()
	eachSQL(t, []sqldb.Kind{sqldb.Postgres, sqldb.SQLite}, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.exec(f.ddl("CREATE TABLE orders2 (id {pk}, v {text}, amount {int})"))
		f.exec("CREATE INDEX orders_amount ON orders (amount)")
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{})
		f.mustRun()
		before := f.bookmark()

		for _, tc := range []struct {
			what string
			src  sqlSrc
		}{
			{"bookmark_keys", sqlSrc{keys: []string{"amount"}}},
			{"bookmark_keys_sort_order", sqlSrc{order: "desc"}},
			{"table", sqlSrc{table: "orders2"}},
		} {
			f.writeJob(sqlJob{src: tc.src})
			_, r := f.run(nil)
			if r.code != 2 || !strings.Contains(r.output(), "orders_db") {
				t.Errorf("%s changed: got exit %d, want 2 and a message naming orders_db\n%v", tc.what, r.code, r)
			}
		}
		if after := f.bookmark(); after != before {
			t.Errorf("bookmark changed by the refused runs:\nbefore %s\nafter  %s", before, after)
		}

		f.writeJob(sqlJob{src: sqlSrc{keys: []string{"amount"}}})
		f.reset()
		s := f.mustRun()
		assertIDSet(t, "run with the new keys after a reset", f.fileIDsOfRun(s.RunID), idRange(1, 10))
	})
}

// TestSQLSinkOverwrite: an overwrite table sink holds what the last run
// wrote (and keeps its content when a run has nothing new).
func TestSQLSinkOverwrite(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{noFiles: true, table: "orders_out", mode: "overwrite"})
		f.mustRun()
		assertIDSet(t, "run 1", f.tableIDs("orders_out"), idRange(1, 10))
		f.insertOrders(idRange(11, 13)...)
		f.mustRun()
		assertIDSet(t, "run 2 (overwrite)", f.tableIDs("orders_out"), idRange(11, 13))
		f.mustRun()
		assertIDSet(t, "run 3 (nothing new)", f.tableIDs("orders_out"), idRange(11, 13))
	})
}

// TestSQLMergePurge: rewinding over a merge run deletes the rows whose
// current version it wrote (the versions they replaced cannot come back),
// and the rerun writes them again: the table ends with each key once at
// its latest values.
func TestSQLMergePurge(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.exec(f.ddl(`CREATE TABLE orders (id {pk}, updated_at {ts} NOT NULL, amount {int});
CREATE INDEX orders_cursor ON orders (updated_at, id)`))
		for id := 1; id <= 5; id++ {
			f.exec(fmt.Sprintf("INSERT INTO orders (id, updated_at, amount) VALUES (%d, '2024-05-01 10:00:00', %d)", id, id))
		}
		f.writeJob(sqlJob{src: sqlSrc{keys: []string{"updated_at", "id"}}, noFiles: true,
			table: "orders_out", mode: "merge", mergeKeys: []string{"id"}})
		r1 := f.mustRun()
		f.exec("UPDATE orders SET amount = 300, updated_at = '2024-05-01 11:00:00' WHERE id = 3")
		f.exec("INSERT INTO orders (id, updated_at, amount) VALUES (6, '2024-05-01 11:00:00', 6)")
		f.mustRun()
		rows := func() string { return fmt.Sprint(f.tableRows("orders_out", f.txt("id", "amount"))) }
		if got, want := rows(), "[[1 1] [2 2] [3 300] [4 4] [5 5] [6 6]]"; got != want {
			t.Fatalf("after run 2: got %s, want %s", got, want)
		}

		f.reset("--to-run", r1.RunID, "--purge-output")
		if got, want := rows(), "[[1 1] [2 2] [4 4] [5 5]]"; got != want {
			t.Errorf("after rewinding to run 1 with --purge-output: got %s, want %s (the rows run 2 wrote deleted)", got, want)
		}
		f.mustRun()
		if got, want := rows(), "[[1 1] [2 2] [3 300] [4 4] [5 5] [6 6]]"; got != want {
			t.Errorf("after the rerun: got %s, want %s", got, want)
		}
	})
}
