package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copyStateTo copies the job's state from src to a new SQLite store and
// returns its path.
func copyStateTo(t *testing.T, f *fixture, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	if r := f.tidemark(nil, "state", "copy", "--from", src, "--to", dst, "--job", "sales"); r.code != 0 {
		t.Fatalf("state copy: got exit %d, want 0\n%v", r.code, r)
	}
	return dst
}

// TestStateCopyOldRunRacesCopy: a run of the store copied from that began
// (and claimed the sink) before the copy's first run, and commits while
// that run publishes, is refused when it publishes (exit 2, sink_owned):
// the new file is in the sink once, from the copy's run.
func TestStateCopyOldRunRacesCopy(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f, src := stateOn(t, be, stateStores[0], jobOpts{})
		monday := f.addCSVs("monday", 1, 10)
		f.mustRun()
		dst := copyStateTo(t, f, src)
		tuesday := f.addCSVs("tuesday", 1, 10)
		old := f.start([]string{"TIDEMARK_FAULT=after-commit:sleep=25s"}, "run", f.jobPath, "--json")
		old.waitFor(t, "fault: paused at after-commit", 2*time.Minute)
		s := f.mustRun("--state", dst)
		assertFiles(t, "the copy's first run", s, 1)
		if old.exited() {
			t.Fatal("the old store's run resumed before the copy's run had published: the pause is too short for this machine")
		}
		r := old.wait(t)
		f.check(r)
		if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
			t.Errorf("the old store's run publishing after the copy's: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
		}
		f.assertSink(concat(monday, tuesday))
		f.assertNoDuplicates()
		// The copy goes on; the old store stays refused.
		wednesday := f.addCSVs("wednesday", 1, 10)
		s = f.mustRun("--state", dst)
		assertFiles(t, "the copy's second run", s, 1)
		if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
			t.Errorf("a later run of the old store: want it refused as sink_owned\n%v", r)
		}
		f.assertSink(concat(monday, tuesday, wednesday))
		f.assertNoDuplicates()
	})
}

// TestStateCopyBeforeAnyOutput: a job whose runs claimed its sink but
// published nothing yet (empty landing folder) is copied; the copy's
// first run takes the location over without --adopt-sink, and the store
// copied from is refused once the copy has published.
func TestStateCopyBeforeAnyOutput(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f, src := stateOn(t, be, stateStores[0], jobOpts{})
		s := f.mustRun() // nothing to read: claims the sink, publishes nothing
		assertFiles(t, "the run over an empty landing folder", s, 0)
		if data := f.out.get(t, "_tidemark/owner.json"); !strings.Contains(string(data), `"job": "sales"`) {
			t.Fatalf("the first run left no ownership record naming the job: %s", data)
		}
		dst := copyStateTo(t, f, src)
		monday := f.addCSVs("monday", 2, 10)
		s, r := f.run(nil, "--state", dst)
		if r.code != 0 {
			t.Fatalf("the copy's first run: got exit %d, want 0 (the copy holds the history of the run that claimed the sink)\n%v", r.code, r)
		}
		assertFiles(t, "the copy's first run", s, 2)
		f.assertSink(monday)
		f.addCSVs("tuesday", 1, 10)
		if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
			t.Errorf("a run of the store copied from after the copy published: want it refused as sink_owned\n%v", r)
		}
		f.assertSink(monday)
	})
}

// TestDeadRunEmptyStagingRemoved: the empty staging folders a run killed
// while the engine wrote left (a local folder; folder markers on S3, as
// Hadoop's S3A writes them) are removed by the next run; a staging folder
// of a run the state does not know (another store's, maybe live) stays.
func TestDeadRunEmptyStagingRemoved(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 1, 10)
		_, r := f.run([]string{"TIDEMARK_FAULT=mid-read"})
		if r.signal == 0 {
			t.Fatalf("the run was not killed at mid-read\n%v", r)
		}
		runs := f.tidemark(nil, "runs", f.jobPath, "--json")
		var list []struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(runs.stdout), &list); err != nil || len(list) != 1 {
			t.Fatalf("runs --json: got %q (%v), want the killed run", runs.stdout, err)
		}
		dead := list[0].RunID
		foreign := "20260101T000000Z-0123456789abcdef"
		var left func() []string
		switch p := f.out.(type) {
		case *localPlace:
			for _, d := range []string{dead + "/data/product=a", foreign} {
				if err := os.MkdirAll(filepath.Join(p.dir, "_tidemark", "staging", filepath.FromSlash(d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			left = func() []string {
				ents, _ := os.ReadDir(filepath.Join(p.dir, "_tidemark", "staging"))
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				return names
			}
		case *s3Place:
			for _, k := range []string{dead + "/", dead + "/data/", foreign + "/"} {
				p.put(t, "_tidemark/staging/"+k, nil)
			}
			left = func() []string {
				keys, err := p.srv.listKeys(t.Context(), p.bucket, p.prefix+"_tidemark/staging/")
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, k := range keys {
					id, _, _ := strings.Cut(strings.TrimPrefix(k, p.prefix+"_tidemark/staging/"), "/")
					if len(names) == 0 || names[len(names)-1] != id {
						names = append(names, id)
					}
				}
				return names
			}
		}
		f.mustRun()
		f.assertSink(monday)
		if got := strings.Join(left(), ","); got != foreign {
			t.Errorf("staging folders after the next run: got %q, want only the unknown run's %q (the dead run's removed)", got, foreign)
		}
	})
}

// TestStateCopyOldRunRacesCopySQLSink: as TestStateCopyOldRunRacesCopy
// for a SQL table sink: the old store's run, paused after its commit while
// the copy's first run loads the new rows, is refused when it loads
// (exit 2, sink_owned), and every row is in the table once.
func TestStateCopyOldRunRacesCopySQLSink(t *testing.T) {
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
		f.mustRun("--state", dst)
		if old.exited() {
			t.Fatal("the old store's run resumed before the copy's run had loaded: the pause is too short for this machine")
		}
		r := f.wait(old)
		if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
			t.Errorf("the old store's run loading after the copy's: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
		}
		assertIDSet(t, "after both runs", f.tableIDs("orders_out"), idRange(1, 13))
		f.insertOrders(14)
		f.mustRun("--state", dst)
		assertIDSet(t, "after the copy's next run", f.tableIDs("orders_out"), idRange(1, 14))
	})
}

// TestStateCopyOldOverwriteRunRacesCopy: as TestStateCopyOldRunRacesCopy
// with an overwrite sink: the old store's run, refused when it publishes,
// neither adds its output nor deletes the copy's.
func TestStateCopyOldOverwriteRunRacesCopy(t *testing.T) {
	t.Parallel()
	f, src := stateOn(t, local, stateStores[0], jobOpts{mode: "overwrite"})
	f.addCSVs("monday", 1, 10)
	f.mustRun()
	dst := copyStateTo(t, f, src)
	tuesday := f.addCSVs("tuesday", 1, 10)
	old := f.start([]string{"TIDEMARK_FAULT=after-commit:sleep=25s"}, "run", f.jobPath, "--json")
	old.waitFor(t, "fault: paused at after-commit", 2*time.Minute)
	f.mustRun("--state", dst)
	f.assertSink(tuesday)
	if old.exited() {
		t.Fatal("the old store's run resumed before the copy's run had published: the pause is too short for this machine")
	}
	r := old.wait(t)
	f.check(r)
	if r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("the old store's overwrite run publishing after the copy's: got exit %d, want 2 (sink_owned)\n%v", r.code, r)
	}
	f.assertSink(tuesday)
}

// TestStateCopyPurgeFromOldStoreAfterCopyClaimed: the copy's first run
// found nothing new (it took the location over and published nothing);
// a reset --purge-output of the store copied from is then refused: it
// would delete output the copy counts as published, lost for good.
func TestStateCopyPurgeFromOldStoreAfterCopyClaimed(t *testing.T) {
	t.Parallel()
	f, src := stateOn(t, local, stateStores[0], jobOpts{})
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	dst := copyStateTo(t, f, src)
	s := f.mustRun("--state", dst)
	assertFiles(t, "the copy's first run", s, 0)
	r := f.tidemark(nil, "bookmark", "reset", f.jobPath, "--purge-output")
	if r.code != 2 || !strings.Contains(r.stderr, "belongs to") {
		t.Errorf("reset --purge-output of the store copied from: got exit %d, want 2 (the location belongs to the copy)\n%v", r.code, r)
	}
	f.assertSink(monday)
	tuesday := f.addCSVs("tuesday", 1, 10)
	s = f.mustRun("--state", dst)
	assertFiles(t, "the copy's second run", s, 1)
	f.assertSink(concat(monday, tuesday))
}
