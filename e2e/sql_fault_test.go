package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestSQLKilledMidRead: the source's server session is killed
// (pg_terminate_backend, KILL) while the run reads: the run exits 1, keeps
// the bookmark and publishes nothing into the file sink or the table sink;
// the rerun delivers every row exactly once.
func TestSQLKilledMidRead(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		// A view through a function that the test turns slow on one row
		// once the run has planned, so that the kill lands in the read.
		fn := map[sqldb.Kind]struct{ fast, slow, cond string }{
			sqldb.Postgres: {
				"CREATE OR REPLACE FUNCTION slow(i bigint) RETURNS boolean LANGUAGE sql VOLATILE AS $$ SELECT true $$",
				"CREATE OR REPLACE FUNCTION slow(i bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$ BEGIN IF i = 80000 THEN PERFORM pg_sleep(60); END IF; RETURN true; END $$",
				"slow(id)",
			},
			sqldb.MySQL: {
				"CREATE OR REPLACE FUNCTION slow(i BIGINT) RETURNS INT NOT DETERMINISTIC RETURN 1",
				"CREATE OR REPLACE FUNCTION slow(i BIGINT) RETURNS INT NOT DETERMINISTIC RETURN IF(i = 80000, SLEEP(60), 0) + 1",
				"slow(id) > 0",
			},
		}[f.kind]
		f.createOrders()
		f.exec(fn.fast)
		f.exec("CREATE VIEW slow_orders AS SELECT id, v, amount FROM orders WHERE " + fn.cond)
		f.insertOrders(idRange(1, 100)...)
		f.writeJob(sqlJob{src: sqlSrc{table: "slow_orders", keys: []string{"id"}}, table: "orders_out"})
		f.mustRun()
		before := f.bookmark()
		filesBefore := f.parquetFiles()

		// Enough rows before the slow one that more than a megabyte has
		// gone down the pipe to the engine when the read is killed: the
		// engine then sees a line cut short, and the run must still name
		// the killed read as the cause.
		for from := int64(101); from <= 100_000; from += 5000 {
			f.insertOrders(idRange(from, min(from+4999, 100_000))...)
		}
		p := f.start([]string{"TIDEMARK_FAULT=after-plan:sleep=3s"}, "run", f.jobPath, "--json")
		p.waitFor(t, "planned", time.Minute)
		f.exec(fn.slow)
		killed := f.db.KillQuery(t, "slow_orders", 30*time.Second)
		f.exec(fn.fast)
		r := f.wait(p)
		if !killed {
			t.Fatalf("the run's read never showed up in the server's session list\n%v", r)
		}
		if r.code != 1 {
			t.Fatalf("run whose session was killed: got exit %d, want 1\n%v", r.code, r)
		}
		assertMentions(t, r, "slow_orders")
		t.Logf("the killed run:\n%v", r)
		if after := f.bookmark(); after != before {
			t.Errorf("bookmark changed by the failed run:\nbefore %s\nafter  %s", before, after)
		}
		if got := f.parquetFiles(); fmt.Sprint(got) != fmt.Sprint(filesBefore) {
			t.Errorf("the failed run published files: before %v, after %v", filesBefore, got)
		}
		assertIDSet(t, "files after the failed run", f.fileIDs(), idRange(1, 100))
		assertIDSet(t, "table after the failed run", f.tableIDs("orders_out"), idRange(1, 100))

		s := f.mustRun()
		assertIDSet(t, "rerun", f.fileIDsOfRun(s.RunID), idRange(101, 100_000))
		assertIDSet(t, "files after the rerun", f.fileIDs(), idRange(1, 100_000))
		assertIDSet(t, "table after the rerun", f.tableIDs("orders_out"), idRange(1, 100_000))
		if left := f.stagingTables(); len(left) > 0 {
			t.Errorf("staging tables left after the rerun: %v", left)
		}
	})
}

// sqlFaultSteps are the steps TIDEMARK_FAULT can kill a run at, and whether
// the state commit happened before.
var sqlFaultSteps = []struct {
	step      string
	committed bool
}{
	{"after-plan", false},
	{"after-stage", false},
	{"after-commit", true},
	{"mid-publish", true},
	{"after-publish", true},
}

// TestSQLFaultAtEachStep kills a run (SIGKILL) at every step of the commit
// protocol, then reruns: every row is in the file sink and (on servers) in
// the table sink exactly once, no staged file or staging table is left,
// and the run after that has nothing to read.
func TestSQLFaultAtEachStep(t *testing.T) {
	t.Parallel()
	for _, kind := range sqlAllKinds {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			for _, tc := range sqlFaultSteps {
				t.Run(tc.step, func(t *testing.T) {
					t.Parallel()
					testSQLFaultAt(t, newSQLFixture(t, kind), tc.step, tc.committed)
				})
			}
		})
	}
}

func testSQLFaultAt(t *testing.T, f *sqlFixture, step string, committed bool) {
	f.createOrders()
	f.insertOrders(idRange(1, 40)...)
	j := sqlJob{}
	if f.kind != sqldb.SQLite {
		j.table = "orders_out"
	}
	// Every kind also writes into a PostgreSQL table (for PostgreSQL
	// sources that is j.table itself).
	pg := f
	if f.kind != sqldb.Postgres {
		pg = f.addPGSink()
		j.pgTable = "pg_out"
	}
	pgTable := j.pgTable
	if pgTable == "" {
		pgTable = j.table
	}
	assertTables := func(what string, want []int64) {
		t.Helper()
		if j.table != "" {
			assertIDSet(t, what+": table orders_out", f.tableIDs("orders_out"), want)
		}
		if pg != f {
			assertIDSet(t, what+": PostgreSQL table pg_out", pg.tableIDs(pgTable), want)
		}
	}
	f.writeJob(j)
	f.mustRun()
	assertTables("run 1", idRange(1, 40))
	before := f.bookmark()

	f.insertOrders(idRange(41, 80)...)
	f.killedAt(step)
	if !committed {
		if after := f.bookmark(); after != before {
			t.Errorf("bookmark changed by a run killed at %s (before the commit):\nbefore %s\nafter  %s", step, before, after)
		}
	}
	// What readers see between the kill and the next command.
	switch step {
	case "after-plan", "after-stage", "after-commit":
		assertIDSet(t, "files after the kill", f.fileIDs(), idRange(1, 40))
		assertTables("after the kill", idRange(1, 40))
	case "after-publish":
		assertIDSet(t, "files after the kill", f.fileIDs(), idRange(1, 80))
		assertTables("after the kill", idRange(1, 80))
	}

	s := f.mustRun()
	if committed {
		if got := f.fileIDsOfRun(s.RunID); len(got) != 0 {
			t.Errorf("rerun after a kill past the commit read %d rows again, want 0 (the killed run is rolled forward)", len(got))
		}
	} else {
		assertIDSet(t, "rerun after a kill before the commit", f.fileIDsOfRun(s.RunID), idRange(41, 80))
	}
	assertIDSet(t, "files after the rerun", f.fileIDs(), idRange(1, 80))
	assertTables("after the rerun", idRange(1, 80))
	for _, db := range []*sqlFixture{f, pg} {
		if left := db.stagingTables(); len(left) > 0 {
			t.Errorf("staging tables left in the %s database after the rerun: %v", db.kind, left)
		}
	}
	if left := stagedFiles(t, f.out); len(left) > 0 {
		t.Errorf("staged files left under the file sink's _tidemark/ after the rerun: %v", firstFew(left))
	}
	s = f.mustRun()
	assertIDSet(t, "the run after the rerun", f.fileIDsOfRun(s.RunID), nil)
	assertIDSet(t, "files at the end", f.fileIDs(), idRange(1, 80))
	assertTables("at the end", idRange(1, 80))
}

// TestSQLMergeAfterCrash: a merge sink survives crashes past the commit:
// killed after the commit (and, later, after publishing), with the source
// updated again before the rerun, the table ends with each key once and
// its latest values.
func TestSQLMergeAfterCrash(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.exec(f.ddl(`CREATE TABLE orders (id {pk}, updated_at {ts} NOT NULL, amount {int});
CREATE INDEX orders_cursor ON orders (updated_at, id)`))
		amount := map[int64]int64{}
		var clock int
		set := func(id, a int64) {
			clock++
			ts := fmt.Sprintf("'2024-05-01 10:00:%02d'", clock)
			if _, ok := amount[id]; ok {
				f.exec(fmt.Sprintf("UPDATE orders SET amount = %d, updated_at = %s WHERE id = %d", a, ts, id))
			} else {
				f.exec(fmt.Sprintf("INSERT INTO orders (id, updated_at, amount) VALUES (%d, %s, %d)", id, ts, a))
			}
			amount[id] = a
		}
		check := func(what string) {
			t.Helper()
			var want [][]string
			for id, a := range amount {
				want = append(want, []string{fmt.Sprint(id), fmt.Sprint(a)})
			}
			sortSQLRows(want)
			got := f.tableRows("orders_out", f.txt("id", "amount"))
			if !sameRows(got, want) {
				t.Errorf("%s: merge sink holds %d rows %v\nwant %d rows %v", what, len(got), fewRows(got), len(want), fewRows(want))
			}
		}
		for id := int64(1); id <= 20; id++ {
			set(id, id)
		}
		f.writeJob(sqlJob{src: sqlSrc{keys: []string{"updated_at", "id"}}, noFiles: true,
			table: "orders_out", mode: "merge", mergeKeys: []string{"id"}})
		f.mustRun()
		check("run 1")

		for _, step := range []string{"after-commit", "mid-publish", "after-publish"} {
			for id := int64(5); id <= 10; id++ {
				set(id, amount[id]+1000)
			}
			set(int64(20+clock), 7)
			f.killedAt(step)
			// The source changes again before the rerun: the rolled-forward
			// run's versions must not overwrite the newer ones.
			set(7, 77777)
			f.mustRun()
			check("rerun after a kill at " + step)
			f.mustRun()
			check("the run after the rerun (" + step + ")")
		}
		if left := f.stagingTables(); len(left) > 0 {
			t.Errorf("staging tables left: %v", left)
		}
	})
}

func fewRows(rows [][]string) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = strings.Join(r, ":")
	}
	return firstFew(s)
}

// TestSQLLateCommitAcrossCrash: the run that reads past an uncommitted row
// is killed after its commit; the row commits; the rerun rolls the killed
// run forward and reads the late row: each row once in the file sink and
// the table sink. Then the run that delivered the late row is undone
// (rewind with --purge-output) and the rerun delivers it once again.
func TestSQLLateCommitAcrossCrash(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(1, 2, 3, 4)
		f.writeJob(sqlJob{src: sqlSrc{lookback: "100"}, table: "orders_out"})
		check := func(what string, want []int64) {
			t.Helper()
			assertIDSet(t, what+": files", f.fileIDs(), want)
			assertIDSet(t, what+": table", f.tableIDs("orders_out"), want)
		}
		f.mustRun()
		a := f.db.Hold(t)
		a.Exec("INSERT INTO orders (id, v, amount) VALUES " + sqlOrderValues([]int64{5}))
		f.insertOrders(6)
		f.killedAt("after-commit")
		a.Commit()
		r3 := f.mustRun()
		assertIDSet(t, "rerun (the late row)", f.fileIDsOfRun(r3.RunID), []int64{5})
		check("after the rerun", idRange(1, 6))

		// A late row again, this time the run reading it is killed before
		// its commit.
		b := f.db.Hold(t)
		b.Exec("INSERT INTO orders (id, v, amount) VALUES " + sqlOrderValues([]int64{7}))
		f.insertOrders(8)
		r4 := f.mustRun()
		b.Commit()
		f.killedAt("after-stage")
		r5 := f.mustRun()
		assertIDSet(t, "run 4", f.fileIDsOfRun(r4.RunID), []int64{8})
		assertIDSet(t, "rerun after the kill before the commit (the late row)", f.fileIDsOfRun(r5.RunID), []int64{7})
		check("after the second rerun", idRange(1, 8))

		f.reset("--to-run", r4.RunID, "--purge-output")
		check("after rewinding to run 4", joinIDs(idRange(1, 6), []int64{8}))
		s := f.mustRun()
		assertIDSet(t, "rerun after the rewind", f.fileIDsOfRun(s.RunID), []int64{7})
		check("at the end", idRange(1, 8))
		s = f.mustRun()
		assertIDSet(t, "the run after that", f.fileIDsOfRun(s.RunID), nil)
	})
}
