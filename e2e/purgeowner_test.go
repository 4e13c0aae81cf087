package e2e

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// TestPurgeRefusedWhereAnotherStoreOwns: a job's state is copied to
// another store (`state copy`) and the job runs there, which takes its sink
// location over; then someone "cleans up" the store copied from with
// `bookmark reset --purge-output`. The output is the copy's now: its
// bookmark counts that input as read, so deleting it would lose the
// records for good. The reset is refused (exit 2, naming the owning
// store), nothing is deleted and the old bookmark stays; the same for a
// sink another job took over with --adopt-sink. The copy itself, before
// its first run, may purge what the store copied from published.
func TestPurgeRefusedWhereAnotherStoreOwns(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 10)
		first := f.mustRun()
		tuesday := f.addCSVs("tuesday", 2, 10)
		f.mustRun()
		dst := filepath.Join(t.TempDir(), "copy.db")
		f.copyState(dst)
		// The copy holds the history the record names: it may purge what
		// the store copied from published.
		f.reset("--state", dst, "--to-run", first.RunID, "--purge-output")
		f.assertSink(monday)
		wednesday := f.addCSVs("wednesday", 2, 10)
		assertFiles(t, "the first run from the copy", f.mustRun("--state", dst), 4)
		before := f.bookmark()

		for _, flags := range [][]string{{"--purge-output"}, {"--to-run", first.RunID, "--purge-output"}} {
			r := f.tidemark(nil, append([]string{"bookmark", "reset", f.jobPath}, flags...)...)
			if r.code != 2 {
				t.Errorf("bookmark reset %v in the store copied from: got exit %d, want 2\n%v", flags, r.code, r)
			}
			assertMentions(t, r, dst, "Nothing was reset or deleted")
			f.assertSink(concat(monday, tuesday, wednesday))
			if after := f.bookmark(); string(after.Version) != string(before.Version) {
				t.Errorf("after the refused reset %v: bookmark version %s, want %s", flags, after.Version, before.Version)
			}
		}
		assertFiles(t, "the next run from the copy", f.mustRun("--state", dst), 0)
		f.assertSink(concat(monday, tuesday, wednesday))

		// Another job takes the location over on purpose.
		g := f.otherJob("other")
		thursday := g.addCSVs("thursday", 1, 10)
		g.mustRun("--adopt-sink")
		r := f.tidemark(nil, "bookmark", "reset", f.jobPath, "--purge-output", "--state", dst)
		if r.code != 2 {
			t.Errorf("bookmark reset --purge-output of a job whose sink another job adopted: got exit %d, want 2\n%v", r.code, r)
		}
		assertMentions(t, r, `"other"`, "Nothing was reset or deleted")
		f.assertSink(concat(monday, tuesday, wednesday, thursday))
	})
}

// TestPurgeRefusedWhereAnotherStoreLoadedTable: as
// TestPurgeRefusedWhereAnotherStoreOwns for a PostgreSQL table sink: once
// a run from the copy loaded into the table, a purge from the store copied
// from, which has no record of that run, is refused and deletes no row.
func TestPurgeRefusedWhereAnotherStoreLoadedTable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	table := sqltest.New(t, sqldb.Postgres)
	f.env = append(f.env, table.PasswordEnv+"="+table.Password)
	f.secrets = append(f.secrets, table.Password)
	writeFile(t, f.jobPath, []byte(tableSinkJob(f.stateFile(), f.in.loc(), table)))
	monday := f.addCSVs("monday", 1, 10)
	first := f.mustRun()
	tuesday := f.addCSVs("tuesday", 1, 10)
	f.mustRun()
	dst := filepath.Join(t.TempDir(), "copy.db")
	f.copyState(dst)
	wednesday := f.addCSVs("wednesday", 1, 10)
	assertFiles(t, "the first run from the copy", f.mustRun("--state", dst), 1)
	for _, flags := range [][]string{{"--purge-output"}, {"--to-run", first.RunID, "--purge-output"}} {
		r := f.tidemark(nil, append([]string{"bookmark", "reset", f.jobPath}, flags...)...)
		if r.code != 2 {
			t.Errorf("bookmark reset %v in the store copied from: got exit %d, want 2\n%v", flags, r.code, r)
		}
		assertMentions(t, r, "orders_out", "Nothing was reset or deleted")
		assertIDSet(t, "table orders_out", tableOrderIDs(t, table), orderIDs(concat(monday, tuesday, wednesday)))
	}
	assertFiles(t, "the next run from the copy", f.mustRun("--state", dst), 0)
}

// copyState copies the fixture's whole state to dst with `tidemark state
// copy`, failing the test unless it exits 0.
func (f *fixture) copyState(dst string) {
	f.t.Helper()
	if r := f.tidemark(nil, "state", "copy", "--from", f.stateFile(), "--to", dst); r.code != 0 {
		f.t.Fatalf("state copy: got exit %d, want 0\n%v", r.code, r)
	}
}
