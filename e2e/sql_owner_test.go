package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLSinkLostState: a SQL table sink's markers name the job's runs;
// with the state deleted (or restored from an older copy), the state knows
// none of the newest, and the run refuses (exit 2) instead of loading
// everything again. --adopt-sink starts a new history on purpose.
func TestSQLSinkLostState(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{noFiles: true, table: "orders_out"})
		f.mustRun()
		state := filepath.Join(f.dir, ".tidemark")
		backup := filepath.Join(f.dir, "backup")
		copyState(t, state, backup)
		f.insertOrders(idRange(11, 13)...)
		f.mustRun()
		assertIDSet(t, "two runs", f.tableIDs("orders_out"), idRange(1, 13))

		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
		_, r := f.runExpect(2, nil)
		assertMentions(t, r, "orders_out", "_tidemark_runs", "restore", "--adopt-sink")
		assertIDSet(t, "after the refused run", f.tableIDs("orders_out"), idRange(1, 13))

		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
		copyState(t, backup, state)
		_, r = f.runExpect(2, nil)
		assertMentions(t, r, "orders_out", "restore")
		assertIDSet(t, "after the run on an older state", f.tableIDs("orders_out"), idRange(1, 13))

		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
		f.exec("DELETE FROM orders_out")
		f.mustRun("--adopt-sink")
		assertIDSet(t, "the new history", f.tableIDs("orders_out"), idRange(1, 13))
		f.insertOrders(14)
		f.mustRun()
		assertIDSet(t, "the run after it", f.tableIDs("orders_out"), idRange(1, 14))
	})
}

// TestSQLSinkLostStateSameSecond: run ids sort by time only to the second,
// so of two runs in one second the later can have the smaller id. The
// state restored from a copy made between them must still be refused:
// the newest marker is the last one published, not the largest id. (The
// test gives the later run's marker an id that sorts first in its second,
// as a second run in that second can have.)
func TestSQLSinkLostStateSameSecond(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{noFiles: true, table: "orders_out"})
		first := f.mustRun()
		state := filepath.Join(f.dir, ".tidemark")
		backup := filepath.Join(f.dir, "backup")
		copyState(t, state, backup)
		f.insertOrders(idRange(11, 13)...)
		second := f.mustRun()
		sameSecond := first.RunID[:strings.Index(first.RunID, "-")] + "-000000"
		if sameSecond >= first.RunID {
			t.Fatalf("run id %s: want one that sorts after %s", first.RunID, sameSecond)
		}
		f.exec("UPDATE _tidemark_runs SET run_id = '" + sameSecond + "' WHERE run_id = '" + second.RunID + "'")

		if err := os.RemoveAll(state); err != nil {
			t.Fatal(err)
		}
		copyState(t, backup, state)
		_, r := f.runExpect(2, nil)
		assertMentions(t, r, "orders_out", sameSecond, "restore", "--adopt-sink")
		assertIDSet(t, "after the run on an older state", f.tableIDs("orders_out"), idRange(1, 13))
	})
}
