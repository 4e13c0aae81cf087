package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// tableSinkFixture is a sales fixture whose job loads into the table
// orders_out of a PostgreSQL database of its own.
func tableSinkFixture(t *testing.T) (*fixture, *sqltest.DB) {
	t.Helper()
	f := newFixture(t, jobOpts{})
	table := sqltest.New(t, sqldb.Postgres)
	f.env = append(f.env, table.PasswordEnv+"="+table.Password)
	f.secrets = append(f.secrets, table.Password)
	writeFile(t, f.jobPath, []byte(tableSinkJob(f.stateFile(), f.in.loc(), table)))
	return f, table
}

// TestPurgeRefusedAfterCopyLoadedNothingTable: the copy's first run loads
// nothing into the table sink (no new input), so the newest marker is
// known to both stores; a reset --purge-output of the store copied from is
// still refused (the table's ownership row names the copy now), and no
// row the copy counts as loaded is deleted. The copy goes on, and the
// store copied from is refused at its next run.
func TestPurgeRefusedAfterCopyLoadedNothingTable(t *testing.T) {
	t.Parallel()
	f, table := tableSinkFixture(t)
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	dst := filepath.Join(t.TempDir(), "copy.db")
	f.copyState(dst)
	assertFiles(t, "the copy's first run", f.mustRun("--state", dst), 0)
	r := f.tidemark(nil, "bookmark", "reset", f.jobPath, "--purge-output")
	if r.code != 2 {
		t.Errorf("bookmark reset --purge-output of the store copied from: got exit %d, want 2\n%v", r.code, r)
	}
	assertMentions(t, r, "orders_out", dst, "Nothing was reset or deleted")
	assertIDSet(t, "table orders_out after the refused purge", tableOrderIDs(t, table), orderIDs(monday))
	tuesday := f.addCSVs("tuesday", 1, 10)
	assertFiles(t, "the copy's second run", f.mustRun("--state", dst), 1)
	assertIDSet(t, "table orders_out", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday)))
	if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("a run of the store copied from: want it refused as sink_owned\n%v", r)
	}
	assertIDSet(t, "table orders_out at the end", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday)))
}

// TestPurgeRacesCopyClaim: a reset --purge-output of the store copied
// from passes its ownership checks, and the copy's first run claims the
// location before the reset deletes anything (the reset paused at
// purge-checked). The purge is then refused and deletes nothing the copy
// counts as published; the copy goes on with every record once. For a
// file sink on a local disk and on S3, and for a SQL table sink.
func TestPurgeRacesCopyClaim(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"files-" + string(local), "files-" + string(onS3), "table"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var f *fixture
			var ids func() []int64
			if be, ok := strings.CutPrefix(kind, "files-"); ok {
				f = newFixtureOn(t, backend(be), jobOpts{})
				ids = func() []int64 { return orderIDs(f.readSink()) }
			} else {
				var table *sqltest.DB
				f, table = tableSinkFixture(t)
				ids = func() []int64 { return tableOrderIDs(t, table) }
			}
			monday := f.addCSVs("monday", 1, 10)
			f.mustRun()
			dst := filepath.Join(t.TempDir(), "copy.db")
			f.copyState(dst)
			reset := f.start([]string{"TIDEMARK_FAULT=purge-checked:sleep=20s"}, "bookmark", "reset", f.jobPath, "--purge-output")
			reset.waitFor(t, "fault: paused at purge-checked", 2*time.Minute)
			s := f.mustRun("--state", dst) // claims the location, reads nothing new
			assertFiles(t, "the copy's first run", s, 0)
			if reset.exited() {
				t.Fatal("the reset resumed before the copy's run had claimed: the pause is too short for this machine")
			}
			r := reset.wait(t)
			f.check(r)
			if r.code != 2 {
				t.Errorf("the purge racing the copy's claim: got exit %d, want 2 (the location is the copy's)\n%v", r.code, r)
			}
			assertIDSet(t, "the sink after the purge", ids(), orderIDs(monday))
			tuesday := f.addCSVs("tuesday", 1, 10)
			assertFiles(t, "the copy's second run", f.mustRun("--state", dst), 1)
			assertIDSet(t, "the sink at the end", ids(), orderIDs(concat(monday, tuesday)))
		})
	}
}

// TestPurgeThenCopyClaimRefused: the store copied from purges first (the
// reset's purge completes); the copy, made before it, counts the purged
// output as published and must not take the location over: its run is
// refused (exit 2), and the store copied from reads the input again, once.
func TestPurgeThenCopyClaimRefused(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"files", "table"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var f *fixture
			var ids func() []int64
			if kind == "files" {
				f = newFixture(t, jobOpts{})
				ids = func() []int64 { return orderIDs(f.readSink()) }
			} else {
				var table *sqltest.DB
				f, table = tableSinkFixture(t)
				ids = func() []int64 { return tableOrderIDs(t, table) }
			}
			monday := f.addCSVs("monday", 1, 10)
			f.mustRun()
			dst := filepath.Join(t.TempDir(), "copy.db")
			f.copyState(dst)
			f.reset("--purge-output")
			assertIDSet(t, "the sink after the purge", ids(), nil)
			_, r := f.run(nil, "--state", dst)
			if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
				t.Errorf("the copy's run after the store copied from purged: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
			}
			assertMentions(t, r, f.stateFile(), "copy its state again")
			assertIDSet(t, "the sink after the copy's run", ids(), nil)
			assertFiles(t, "the run of the store that purged", f.mustRun(), 1)
			assertIDSet(t, "the sink at the end", ids(), orderIDs(monday))
		})
	}
}

// twoSinkJob is the sales job with a table sink of every order and a
// file sink of the big ones (none in these tests' input): a run publishes
// nothing to the file sink.
func twoSinkJob(state, landing, out string, db *sqltest.DB, filesFirst bool) string {
	tableSink := fmt.Sprintf(`  - ctx: orders_table
    from: clean_orders
    connection: %q
    password_env: %s
    table: orders_out
    mode: append
`, db.Connection, db.PasswordEnv)
	fileSink := fmt.Sprintf(`  - ctx: big_files
    from: big_orders
    path: %q
    format: csv
`, out)
	sinks := tableSink + fileSink
	if filesFirst {
		sinks = fileSink + tableSink
	}
	return fmt.Sprintf(`job: sales
state: %q
sources:
  - ctx: orders_source
    path: %q
    format: csv
    options: {header: true}
transforms:
  clean_orders: |
    %s
  big_orders: |
    SELECT * FROM clean_orders WHERE amount > 1000000000
sinks:
%s`, state, landing, cleanOrders, sinks)
}

// TestStateCopyTwoSinkKindsRace: a job with a table sink and a file sink;
// the old store's run (paused after its commit) and the copy's first run
// (paused after its commit, having claimed both sinks) race to publish.
// The old store's run publishes nothing to the file sink and would load
// the table; the copy's would then be refused at the table and the old
// store at the file sink: both stores stuck. The copy's claim takes the
// table over too, so the old store's run is refused at the table, the
// copy's run loads, every row is in the table once, and the job goes on
// from the copy.
func TestStateCopyTwoSinkKindsRace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	table := sqltest.New(t, sqldb.Postgres)
	f.env = append(f.env, table.PasswordEnv+"="+table.Password)
	f.secrets = append(f.secrets, table.Password)
	writeFile(t, f.jobPath, []byte(twoSinkJob(f.stateFile(), f.in.loc(), f.out.loc(), table, false)))
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	dst := filepath.Join(t.TempDir(), "copy.db")
	f.copyState(dst)
	tuesday := f.addCSVs("tuesday", 1, 10)
	old := f.start([]string{"TIDEMARK_FAULT=after-commit:sleep=25s"}, "run", f.jobPath, "--json")
	old.waitFor(t, "fault: paused at after-commit", 2*time.Minute)
	cp := f.start([]string{"TIDEMARK_FAULT=after-commit:sleep=40s"}, "run", f.jobPath, "--json", "--state", dst)
	cp.waitFor(t, "fault: paused at after-commit", 2*time.Minute)
	if old.exited() {
		t.Fatal("the old store's run resumed before the copy's run had committed: the pause is too short for this machine")
	}
	r := old.wait(t)
	f.check(r)
	if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("the old store's run publishing after the copy claimed: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
	}
	r = cp.wait(t)
	f.check(r)
	if r.code != 0 {
		t.Errorf("the copy's first run: got exit %d, want 0\n%v", r.code, r)
	}
	assertIDSet(t, "table orders_out after both runs", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday)))
	wednesday := f.addCSVs("wednesday", 1, 10)
	assertFiles(t, "the copy's next run", f.mustRun("--state", dst), 1)
	assertIDSet(t, "table orders_out at the end", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday, wednesday)))
	if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("a later run of the old store: want it refused as sink_owned\n%v", r)
	}
}

// TestRefusedAtSecondSinkMovesNoRecord: a run of the copy is refused at
// its second sink (the store copied from published there after the copy
// was made); its first sink's record, which the copy could take over, is
// left naming the store copied from, so that store goes on (it was
// refused there, the record naming a run of the copy no store records).
func TestRefusedAtSecondSinkMovesNoRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	table := sqltest.New(t, sqldb.Postgres)
	f.env = append(f.env, table.PasswordEnv+"="+table.Password)
	f.secrets = append(f.secrets, table.Password)
	writeFile(t, f.jobPath, []byte(twoSinkJob(f.stateFile(), f.in.loc(), f.out.loc(), table, true)))
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	dst := filepath.Join(t.TempDir(), "copy.db")
	f.copyState(dst)
	tuesday := f.addCSVs("tuesday", 1, 10)
	f.mustRun() // loads the table; nothing to the file sink
	_, r := f.run(nil, "--state", dst)
	if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
		t.Fatalf("the copy's run after the store copied from loaded: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
	}
	owner := string(f.out.get(t, "_tidemark/owner.json"))
	if strings.Contains(owner, filepath.Base(dst)) {
		t.Errorf("the refused run of the copy moved the file sink's record to the copy:\n%s", owner)
	}
	wednesday := f.addCSVs("wednesday", 1, 10)
	assertFiles(t, "the next run of the store copied from", f.mustRun(), 1)
	assertIDSet(t, "table orders_out", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday, wednesday)))
}

// TestTableSinkOlderTidemark: a table loaded by a tidemark from before
// ownership rows (no _tidemark_owners) keeps loading; its next run claims
// it, and a state copy then takes it over as a new table would be.
func TestTableSinkOlderTidemark(t *testing.T) {
	t.Parallel()
	f, table := tableSinkFixture(t)
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	table.Exec(t, "DROP TABLE _tidemark_owners")
	tuesday := f.addCSVs("tuesday", 1, 10)
	assertFiles(t, "the run over the older table", f.mustRun(), 1)
	assertIDSet(t, "table orders_out", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday)))
	if n := table.Count(t, "SELECT count(*) FROM _tidemark_owners"); n != 1 {
		t.Errorf("ownership rows after the run: got %d, want 1", n)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	f.copyState(dst)
	wednesday := f.addCSVs("wednesday", 1, 10)
	assertFiles(t, "the copy's first run", f.mustRun("--state", dst), 1)
	if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("a run of the store copied from: want it refused as sink_owned\n%v", r)
	}
	assertIDSet(t, "table orders_out at the end", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday, wednesday)))
}

// TestAdoptTableSinkPastLoadCheck: the old store's run, committed while
// the copy's first run loaded the same rows, is refused at its load. The
// copy is then given up on purpose: its rows are deleted by hand (its
// marker stays) and the old store goes on with `--adopt-sink`, which
// takes the table over and loads its committed run past the load-time
// check; every row is in the table once, and the copy is refused after.
func TestAdoptTableSinkPastLoadCheck(t *testing.T) {
	t.Parallel()
	eachSQL(t, sqlServerKinds, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{noFiles: true, table: "orders_out"})
		f.mustRun()
		dst := filepath.Join(t.TempDir(), "copy.db")
		if r := f.tidemark(nil, "state", "copy", "--from", filepath.Join(f.dir, ".tidemark", "state.db"), "--to", dst); r.code != 0 {
			t.Fatalf("state copy: got exit %d, want 0\n%v", r.code, r)
		}
		f.insertOrders(idRange(11, 13)...)
		old := f.start([]string{"TIDEMARK_FAULT=after-commit:sleep=25s"}, "run", f.jobPath, "--json")
		old.waitFor(t, "fault: paused at after-commit", 2*time.Minute)
		copied := f.mustRun("--state", dst)
		if old.exited() {
			t.Fatal("the old store's run resumed before the copy's run had loaded: the pause is too short for this machine")
		}
		r := f.wait(old)
		if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
			t.Fatalf("the old store's run loading after the copy's: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
		}
		assertMentions(t, r, "--adopt-sink")
		f.exec("DELETE FROM orders_out WHERE _tidemark_run_id = '" + copied.RunID + "'")
		f.mustRun("--adopt-sink")
		assertIDSet(t, "after the old store adopted the table", f.tableIDs("orders_out"), idRange(1, 13))
		f.insertOrders(14)
		f.mustRun()
		assertIDSet(t, "after the old store's next run", f.tableIDs("orders_out"), idRange(1, 14))
		if _, r := f.run(nil, "--state", dst); r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
			t.Errorf("a run of the copy after the old store adopted the table: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
		}
	})
}

// TestClaimedByUnknownSaysWhy: a location whose record names, as the run
// that claimed it, a run this state has no record of (and nothing else it
// does not know) is refused with a message that says so: a copy of the
// state runs the job there, or that run was refused before it was
// recorded, and then --adopt-sink takes the location back.
func TestClaimedByUnknownSaysWhy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("monday", 1, 10)
	f.mustRun()
	dst := filepath.Join(t.TempDir(), "copy.db")
	f.copyState(dst)
	claimed := f.mustRun("--state", dst) // takes the location over, publishes nothing
	f.addCSVs("tuesday", 1, 10)
	_, r := f.runExpect(2)
	assertMentions(t, r, "claimed_by", claimed.RunID, dst, "refused at another sink before it was recorded", "--adopt-sink")
}
