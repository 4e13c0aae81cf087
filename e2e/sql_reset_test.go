package e2e

import (
	"testing"

	"github.com/tidemark-etl/tidemark/source/sqltable/sqldb"
)

// TestSQLRewindPurge: pause from/to re-reads exactly the key ranges of the
// runs in (from, to]; `bookmark reset --to-run R --purge-output` removes
// what every later run loaded into the table sink and the file sink (the
// pause run's rows too) and the rerun delivers every row exactly once; a
// full reset with --purge-output empties both and the rerun reloads all.
func TestSQLRewindPurge(t *testing.T) {
	t.Parallel()
	eachSQL(t, allKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		j := sqlJob{}
		if f.kind != sqldb.SQLite {
			j.table = "orders_out"
		}
		f.writeJob(j)
		assertBoth := func(what string, want []int64) {
			t.Helper()
			assertIDs(t, what+": files", f.fileIDs(), want)
			if j.table != "" {
				assertIDs(t, what+": table orders_out", f.tableIDs("orders_out"), want)
			}
		}

		f.insertOrders(span(1, 10)...)
		r1 := f.mustRun()
		f.insertOrders(span(11, 20)...)
		r2 := f.mustRun()
		f.insertOrders(span(21, 30)...)
		r3 := f.mustRun()
		assertIDs(t, "run 2", f.fileIDsOfRun(r2.RunID), span(11, 20))
		assertBoth("after three runs", span(1, 30))
		f.insertOrders(span(31, 35)...) // not read by any of the runs: pause from/to must not read it

		p := f.mustRun("--job-bookmark-option", "pause", "--job-bookmark-from", r1.RunID, "--job-bookmark-to", r3.RunID)
		assertIDs(t, "pause from run 1 to run 3", f.fileIDsOfRun(p.RunID), span(11, 30))
		assertBoth("after the pause run", ids(span(1, 30), span(11, 30)))

		f.reset("--to-run", r1.RunID, "--purge-output")
		assertBoth("after reset --to-run run1 --purge-output", span(1, 10))

		s := f.mustRun()
		assertIDs(t, "rerun after the rewind", f.fileIDsOfRun(s.RunID), span(11, 35))
		assertBoth("after the rerun", span(1, 35))
		s = f.mustRun()
		assertIDs(t, "the run after the rerun", f.fileIDsOfRun(s.RunID), nil)

		f.reset("--purge-output")
		assertBoth("after reset --purge-output", nil)
		s = f.mustRun()
		assertIDs(t, "rerun after the full reset", f.fileIDsOfRun(s.RunID), span(1, 35))
		assertBoth("after the rerun from scratch", span(1, 35))
		if left := f.stagingTables(); len(left) > 0 {
			t.Errorf("staging tables left: %v", left)
		}
	})
}
