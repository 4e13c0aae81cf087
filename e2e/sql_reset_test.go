package e2e

import (
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestSQLRewindPurge: pause from/to re-reads exactly the key ranges of the
// runs in (from, to]; `bookmark reset --to-run R --purge-output` removes
// what every later run loaded into the table sink and the file sink (the
// pause run's rows too) and the rerun delivers every row exactly once; a
// full reset with --purge-output empties both and the rerun reloads all.
func TestSQLRewindPurge(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlAllKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		j := sqlJob{}
		if f.kind != sqldb.SQLite {
			j.table = "orders_out"
		}
		f.writeJob(j)
		assertBoth := func(what string, want []int64) {
			t.Helper()
			assertIDSet(t, what+": files", f.fileIDs(), want)
			if j.table != "" {
				assertIDSet(t, what+": table orders_out", f.tableIDs("orders_out"), want)
			}
		}

		f.insertOrders(idRange(1, 10)...)
		r1 := f.mustRun()
		f.insertOrders(idRange(11, 20)...)
		r2 := f.mustRun()
		f.insertOrders(idRange(21, 30)...)
		r3 := f.mustRun()
		assertIDSet(t, "run 2", f.fileIDsOfRun(r2.RunID), idRange(11, 20))
		assertBoth("after three runs", idRange(1, 30))
		f.insertOrders(idRange(31, 35)...) // not read by any of the runs: pause from/to must not read it

		p := f.mustRun("--job-bookmark-option", "pause", "--job-bookmark-from", r1.RunID, "--job-bookmark-to", r3.RunID)
		assertIDSet(t, "pause from run 1 to run 3", f.fileIDsOfRun(p.RunID), idRange(11, 30))
		assertBoth("after the pause run", joinIDs(idRange(1, 30), idRange(11, 30)))

		f.reset("--to-run", r1.RunID, "--purge-output")
		assertBoth("after reset --to-run run1 --purge-output", idRange(1, 10))

		s := f.mustRun()
		assertIDSet(t, "rerun after the rewind", f.fileIDsOfRun(s.RunID), idRange(11, 35))
		assertBoth("after the rerun", idRange(1, 35))
		s = f.mustRun()
		assertIDSet(t, "the run after the rerun", f.fileIDsOfRun(s.RunID), nil)

		f.reset("--purge-output")
		assertBoth("after reset --purge-output", nil)
		s = f.mustRun()
		assertIDSet(t, "rerun after the full reset", f.fileIDsOfRun(s.RunID), idRange(1, 35))
		assertBoth("after the rerun from scratch", idRange(1, 35))
		if left := f.stagingTables(); len(left) > 0 {
			t.Errorf("staging tables left: %v", left)
		}
	})
}

// TestSQLPauseFromToLateRows: pause from/to re-reads what the runs in
// (from, to] read, a late row included, exactly once: run 2 read 6 while 5
// was uncommitted, run 3 read 5 as a late row; pause from run 1 to run 3
// reads 5 and 6 once each (5 lies in run 2's range as the table is now and
// among run 3's late rows, and must not come twice).
func TestSQLPauseFromToLateRows(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(1, 2, 3, 4)
		f.writeJob(sqlJob{src: sqlSrc{lookback: "100"}})
		r1 := f.mustRun()
		a := f.db.Hold(t)
		a.Exec("INSERT INTO orders (id, v, amount) VALUES " + sqlOrderValues([]int64{5}))
		f.insertOrders(6)
		r2 := f.mustRun()
		a.Commit()
		r3 := f.mustRun()
		assertIDSet(t, "run 2", f.fileIDsOfRun(r2.RunID), []int64{6})
		assertIDSet(t, "run 3 (late)", f.fileIDsOfRun(r3.RunID), []int64{5})
		f.insertOrders(7)

		p := f.mustRun("--job-bookmark-option", "pause", "--job-bookmark-from", r1.RunID, "--job-bookmark-to", r3.RunID)
		assertIDSet(t, "pause from run 1 to run 3", f.fileIDsOfRun(p.RunID), []int64{5, 6})
		p = f.mustRun("--job-bookmark-option", "pause", "--job-bookmark-from", r2.RunID, "--job-bookmark-to", r3.RunID)
		assertIDSet(t, "pause from run 2 to run 3", f.fileIDsOfRun(p.RunID), []int64{5})
		p = f.mustRun("--job-bookmark-option", "pause", "--job-bookmark-from", r1.RunID, "--job-bookmark-to", r2.RunID)
		assertIDSet(t, "pause from run 1 to run 2 (5 now lies in its range)", f.fileIDsOfRun(p.RunID), []int64{5, 6})
		s := f.mustRun()
		assertIDSet(t, "enable run after the pauses", f.fileIDsOfRun(s.RunID), []int64{7})
	})
}
