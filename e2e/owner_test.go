package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ownerRecord is a sink location's _tidemark/owner.json, as far as the
// tests read it.
type ownerRecord struct {
	Job          string `json:"job"`
	StateStoreID string `json:"state_store_id"`
	StateStore   string `json:"state_store"`
	Version      int64  `json:"version"`
}

// owner reads the output's ownership record; ok is false when it has none.
func (f *fixture) owner() (ownerRecord, bool) {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.outDir(), "_tidemark", "owner.json"))
	if os.IsNotExist(err) {
		return ownerRecord{}, false
	}
	if err != nil {
		f.t.Fatal(err)
	}
	var o ownerRecord
	if err := json.Unmarshal(data, &o); err != nil {
		f.t.Fatalf("decoding _tidemark/owner.json: %v\n%s", err, data)
	}
	return o, true
}

// stateFile is the fixture's default state store.
func (f *fixture) stateFile() string { return filepath.Join(f.dir, ".tidemark", "state.db") }

// otherJob makes a second fixture whose job (named name) writes into f's
// output; its records come from f's generator, so order ids stay unique.
func (f *fixture) otherJob(name string) *fixture {
	f.t.Helper()
	g := newFixtureOn(f.t, f.be, jobOpts{name: name})
	g.out = f.out
	g.gen = f.gen
	g.writeJob(jobOpts{name: name})
	return g
}

// loseStaging deletes what a committed, unpublished run staged: its staged
// files under _tidemark/staging/ and, on S3, its incomplete uploads.
func (f *fixture) loseStaging() {
	f.t.Helper()
	switch o := f.out.(type) {
	case *localPlace:
		if err := os.RemoveAll(filepath.Join(o.dir, "_tidemark", "staging")); err != nil {
			f.t.Fatal(err)
		}
	case *s3Place:
		cl := sharedS3(f.t).client
		ctx := context.Background()
		out, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(o.bucket), Prefix: aws.String(o.prefix)})
		if err != nil {
			f.t.Fatal(err)
		}
		for _, u := range out.Uploads {
			if _, err := cl.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: aws.String(o.bucket), Key: u.Key, UploadId: u.UploadId}); err != nil {
				f.t.Fatal(err)
			}
		}
		keys, err := sharedS3(f.t).listKeys(ctx, o.bucket, o.prefix+"_tidemark/staging/")
		if err != nil {
			f.t.Fatal(err)
		}
		for _, k := range keys {
			o.remove(f.t, strings.TrimPrefix(k, o.prefix))
		}
	}
}

// TestSinkOfTwoJobs: job sales commits a run and is killed before it
// publishes; job other is then pointed at the same sink. It is refused
// (exit 2, naming the owner and its state store) before it touches
// anything, so sales's staged run survives and its next run publishes it.
// --adopt-sink hands the location over, after which sales is refused.
func TestSinkOfTwoJobs(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		tuesday := f.addCSVs("tuesday", 2, 20)
		if _, r := f.run([]string{"TIDEMARK_FAULT=after-commit"}); r.signal != syscall.SIGKILL {
			t.Fatalf("run with TIDEMARK_FAULT=after-commit: want it killed\n%v", r)
		}
		if len(f.stagedFiles()) == 0 && len(f.preparedUploads()) == 0 {
			t.Fatal("the killed run left nothing staged: the test tests nothing")
		}

		g := f.otherJob("other")
		theirs := g.addCSVs("theirs", 1, 10)
		if _, r := g.run(nil); r.code != 2 {
			t.Errorf("the other job's run: got exit %d, want 2\n%v", r.code, r)
		} else {
			assertMentions(t, r, "sales", f.stateFile(), "--adopt-sink")
		}
		if len(f.stagedFiles()) == 0 && len(f.preparedUploads()) == 0 {
			t.Error("the other job deleted the owner's staged run")
		}

		f.mustRun()
		f.assertSink(concat(monday, tuesday))
		f.assertNoDuplicates()
		if o, ok := f.owner(); !ok || o.Job != "sales" {
			t.Fatalf("owner record %+v (present %v), want job sales", o, ok)
		}

		// The hand-over.
		s := g.mustRun("--adopt-sink")
		assertFiles(t, "the adopting run", s, 1)
		if o, _ := f.owner(); o.Job != "other" {
			t.Fatalf("after --adopt-sink the owner record names %q, want other", o.Job)
		}
		f.assertSink(concat(monday, tuesday, theirs))
		f.addCSVs("wednesday", 1, 10)
		_, r := f.runExpect(2)
		assertMentions(t, r, "other", g.stateFile())
		f.assertSink(concat(monday, tuesday, theirs))
		assertFiles(t, "the owner's next run", g.mustRun(), 0)
	})
}

// TestCleanupOnlyOwnRuns: recovery deletes what the job's own dead runs
// staged or began to upload, and leaves staged files and uploads with
// tidemark's names that no run of the job made.
func TestCleanupOnlyOwnRuns(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		const foreignRun = "20200101T000000Z-abcdef"
		foreign := "_tidemark/staging/" + foreignRun + "/data/product=a/data_0.parquet"
		f.out.put(t, foreign, []byte("not this job's"))
		var foreignUpload string
		if o, ok := f.out.(*s3Place); ok {
			foreignUpload = o.prefix + "product=a/part-" + foreignRun + "-00000.parquet"
			if _, err := sharedS3(t).client.CreateMultipartUpload(context.Background(), &s3.CreateMultipartUploadInput{
				Bucket: aws.String(o.bucket), Key: aws.String(foreignUpload)}); err != nil {
				t.Fatal(err)
			}
		}
		tuesday := f.addCSVs("tuesday", 2, 20)
		if _, r := f.run([]string{"TIDEMARK_FAULT=after-stage"}); r.signal != syscall.SIGKILL {
			t.Fatalf("run with TIDEMARK_FAULT=after-stage: want it killed\n%v", r)
		}
		if len(f.stagedFiles()) < 2 && len(f.preparedUploads()) < 2 {
			t.Fatal("the killed run left nothing staged: the test tests nothing")
		}

		assertFiles(t, "the run after the kill", f.mustRun(), 2)
		f.assertSink(concat(monday, tuesday))
		if got := f.stagedFiles(); len(got) != 1 || !strings.HasSuffix(filepath.ToSlash(got[0]), foreign) {
			t.Errorf("staged files after recovery: %v, want only the foreign %s", got, foreign)
		}
		if foreignUpload != "" {
			ups := f.preparedUploads()
			if len(ups) != 1 || !strings.Contains(ups[0], foreignUpload) {
				t.Errorf("incomplete uploads after recovery: %v, want only the foreign %s", ups, foreignUpload)
			}
		}
		// What is left alone is not left without a word.
		_, r := f.runExpect(0)
		assertMentions(t, r, "staged files of runs this job's state does not know are left alone")
		if foreignUpload != "" {
			assertMentions(t, r, "incomplete uploads of runs this job's state does not know are left alone")
		}
	})
}

// TestLostStagingOfCommittedRun: a run commits and is killed before it
// publishes, and what it staged disappears. The next run fails (exit 1)
// naming the run whose output is lost and the reset that reads its input
// again; the reset goes through and the input lands exactly once.
func TestLostStagingOfCommittedRun(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		for _, toRun := range []bool{true, false} {
			name := "clear"
			if toRun {
				name = "to-run"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixtureOn(t, be, jobOpts{})
				monday := f.addCSVs("monday", 3, 20)
				first := f.mustRun()
				tuesday := f.addCSVs("tuesday", 2, 20)
				if _, r := f.run([]string{"TIDEMARK_FAULT=after-commit"}); r.signal != syscall.SIGKILL {
					t.Fatalf("run with TIDEMARK_FAULT=after-commit: want it killed\n%v", r)
				}
				lost := f.bookmark().RunID
				f.loseStaging()

				_, r := f.runExpect(1)
				assertMentions(t, r, lost, "lost", "bookmark reset", "--to-run "+first.RunID, "--purge-output")
				f.assertSink(monday)

				if toRun {
					f.reset("--to-run", first.RunID, "--purge-output")
					assertFiles(t, "the run after the rewind", f.mustRun(), 2)
				} else {
					f.reset("--purge-output")
					assertFiles(t, "the run after the reset", f.mustRun(), 5)
				}
				f.assertSink(concat(monday, tuesday))
				f.assertNoDuplicates()
				f.assertNoUploads("at the end")
				assertFiles(t, "the run after that", f.mustRun(), 0)
			})
		}
	})
}

// TestLostStateRefused: the state store is deleted, emptied, or restored
// from an older copy; the sink's ownership record says the job wrote there
// from a state this one does not know (or up to a later version), so the
// run refuses (exit 2) instead of writing everything again. --adopt-sink
// starts a new history on purpose.
func TestLostStateRefused(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		backup := filepath.Join(f.dir, "backup")
		copyState(t, filepath.Dir(f.stateFile()), backup)
		tuesday := f.addCSVs("tuesday", 1, 20)
		f.mustRun()
		saved := filepath.Join(f.dir, "saved")
		copyState(t, filepath.Dir(f.stateFile()), saved)

		// Deleted.
		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		_, r := f.runExpect(2)
		assertMentions(t, r, "restore", "--adopt-sink", "new sink")
		f.assertSink(concat(monday, tuesday))

		// Emptied: an empty file where the state was.
		writeFile(t, f.stateFile(), nil)
		_, r = f.runExpect(2)
		assertMentions(t, r, "restore", "--adopt-sink")
		f.assertSink(concat(monday, tuesday))

		// Restored from a copy older than the sink's output.
		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		copyState(t, backup, filepath.Dir(f.stateFile()))
		_, r = f.runExpect(2)
		assertMentions(t, r, "version", "restore", "--adopt-sink")
		f.assertSink(concat(monday, tuesday))

		// The current state back: the job goes on.
		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		copyState(t, saved, filepath.Dir(f.stateFile()))
		wednesday := f.addCSVs("wednesday", 1, 20)
		assertFiles(t, "the run with the state restored", f.mustRun(), 1)
		f.assertSink(concat(monday, tuesday, wednesday))

		// A new history on purpose: an empty state adopts the sink and
		// reads everything again (here into a purged sink).
		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		f.runExpect(2)
		dir := f.outDir()
		for _, p := range sinkFiles(t, dir) {
			rel, _ := filepath.Rel(dir, p)
			f.out.remove(t, filepath.ToSlash(rel))
		}
		assertFiles(t, "the adopting run", f.mustRun("--adopt-sink"), 4)
		f.assertSink(concat(monday, tuesday, wednesday))
		assertFiles(t, "the run after it", f.mustRun(), 0)
	})
}

// TestSinkWithoutOwnerRecord: a sink written before ownership records
// existed (or whose record was deleted) is claimed by the next run of the
// job that writes it; another job is refused from then on.
func TestSinkWithoutOwnerRecord(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		if _, ok := f.owner(); !ok {
			t.Fatal("the first run left no _tidemark/owner.json")
		}
		f.out.remove(t, "_tidemark/owner.json")
		tuesday := f.addCSVs("tuesday", 1, 20)
		assertFiles(t, "the run on a sink without a record", f.mustRun(), 1)
		o, ok := f.owner()
		if !ok || o.Job != "sales" || o.StateStoreID == "" || o.Version != 2 {
			t.Fatalf("owner record %+v (present %v), want job sales, a state store id and version 2", o, ok)
		}
		f.assertSink(concat(monday, tuesday))

		g := f.otherJob("other")
		g.addCSVs("theirs", 1, 10)
		_, r := g.runExpect(2)
		assertMentions(t, r, "sales")
		f.assertSink(concat(monday, tuesday))
	})
}

// copyState copies a state folder (the database and its WAL files).
func copyState(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(to, e.Name()), data)
	}
}

// TestSinkClaimRace: two jobs start at once on a new sink location; one
// claims it and runs, the other is refused (exit 2) and writes nothing.
func TestSinkClaimRace(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		a := newFixtureOn(t, be, jobOpts{name: "alpha"})
		b := a.otherJob("beta")
		recs := map[string][]record{"alpha": a.addCSVs("a", 2, 10), "beta": b.addCSVs("b", 2, 10)}
		pa := a.start(nil, "run", a.jobPath, "--json")
		pb := b.start(nil, "run", b.jobPath, "--json")
		ra, rb := a.wait(pa), b.wait(pb)
		winner := ""
		switch {
		case ra.code == 0 && rb.code == 2:
			winner = "alpha"
			assertMentions(t, rb, "alpha")
		case rb.code == 0 && ra.code == 2:
			winner = "beta"
			assertMentions(t, ra, "beta")
		default:
			t.Fatalf("two jobs claiming one sink: exits %d and %d, want one 0 and one 2\n%v\n%v", ra.code, rb.code, ra, rb)
		}
		if o, _ := a.owner(); o.Job != winner {
			t.Errorf("the owner record names %q, want the run that succeeded, %s", o.Job, winner)
		}
		a.assertSink(recs[winner])
	})
}

// TestStateRestoredAfterPartialPublish: a run is killed after it published
// its first file, and the state is restored from a copy made before that
// run. The sink's record already names the run's version, so the next run
// is refused instead of reading that run's input again next to what it
// published; with the newest state back the run's publish is finished.
func TestStateRestoredAfterPartialPublish(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		stateDir := filepath.Dir(f.stateFile())
		backup := filepath.Join(f.dir, "backup")
		copyState(t, stateDir, backup)
		tuesday := f.addCSVs("tuesday", 2, 40)
		if _, r := f.run([]string{"TIDEMARK_FAULT=mid-publish"}); r.signal != syscall.SIGKILL {
			t.Fatalf("run with TIDEMARK_FAULT=mid-publish: want it killed\n%v", r)
		}
		published := f.readSink()
		if len(published) <= len(monday) || len(published) >= len(monday)+len(tuesday) {
			t.Fatalf("the killed run left %d rows published, want more than monday's %d and fewer than %d: the test tests nothing",
				len(published), len(monday), len(monday)+len(tuesday))
		}
		newest := filepath.Join(f.dir, "newest")
		copyState(t, stateDir, newest)

		if err := os.RemoveAll(stateDir); err != nil {
			t.Fatal(err)
		}
		copyState(t, backup, stateDir)
		_, r := f.runExpect(2)
		assertMentions(t, r, "version", "restore", "--adopt-sink", "expect it twice")
		assertRecords(t, "the sink after the refused run", f.readSink(), published)

		if err := os.RemoveAll(stateDir); err != nil {
			t.Fatal(err)
		}
		copyState(t, newest, stateDir)
		assertFiles(t, "the run with the newest state", f.mustRun(), 0)
		f.assertSink(concat(monday, tuesday))
		f.assertNoDuplicates()
	})
}

// TestDamagedOwnerRecord: an ownership record that is empty, not JSON or
// lacks the owner fails the run (exit 1) saying what is wrong with which
// file and how to go on; nothing is written; deleting it lets the next run
// claim the location.
func TestDamagedOwnerRecord(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		tuesday := f.addCSVs("tuesday", 1, 20)
		for _, c := range []struct{ content, why string }{
			{"", "empty"},
			{"  \n", "empty"},
			{"{}", "names no job"},
			{"null", "names no job"},
			{`{"job":"sales"}`, "no state store id"},
			{"garbage", "invalid character"},
		} {
			f.out.put(t, "_tidemark/owner.json", []byte(c.content))
			_, r := f.runExpect(1)
			assertMentions(t, r, "_tidemark/owner.json", "not a tidemark ownership record", c.why, "delete it")
			if strings.Contains(r.stderr, "<nil>") {
				t.Errorf("owner.json %q: the message says <nil>:\n%s", c.content, r.stderr)
			}
			f.assertSink(monday)
		}
		f.out.remove(t, "_tidemark/owner.json")
		assertFiles(t, "the run after the record was deleted", f.mustRun(), 1)
		f.assertSink(concat(monday, tuesday))
		if o, ok := f.owner(); !ok || o.Job != "sales" {
			t.Errorf("owner record %+v (present %v), want job sales", o, ok)
		}

		// --adopt-sink replaces a damaged record.
		f.out.put(t, "_tidemark/owner.json", []byte("{"))
		wednesday := f.addCSVs("wednesday", 1, 20)
		assertFiles(t, "the adopting run", f.mustRun("--adopt-sink"), 1)
		f.assertSink(concat(monday, tuesday, wednesday))
		if o, ok := f.owner(); !ok || o.Job != "sales" || o.Version != 3 {
			t.Errorf("owner record after --adopt-sink %+v (present %v), want job sales at version 3", o, ok)
		}
	})
}

// TestLostStateOfEmptySink: a job's first run claims its sink and
// publishes nothing (no input yet, or it failed); its state is deleted to
// start over. The location holds nothing that could be read twice, so the
// state made anew at the same place claims it again instead of being
// refused for output that is not there. A state store at another place is
// still refused (a run of it may be under way), saying the location holds
// no output yet; and a location holding a dead run's staged files is not
// empty.
func TestLostStateOfEmptySink(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		assertFiles(t, "the first run, on an empty landing", f.mustRun(), 0)
		first, ok := f.owner()
		if !ok {
			t.Fatal("the first run claimed nothing: the test tests nothing")
		}
		_, r := f.runExpect(2, "--state", filepath.Join(f.dir, "other", "state.db"))
		assertMentions(t, r, "holds no output yet", f.stateFile(), "--adopt-sink")

		if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
			t.Fatal(err)
		}
		monday := f.addCSVs("monday", 2, 20)
		assertFiles(t, "the run with the state made anew", f.mustRun(), 2)
		f.assertSink(monday)
		if o, _ := f.owner(); o.Job != "sales" || o.StateStoreID == first.StateStoreID || o.Version != 1 {
			t.Errorf("owner record %+v, want job sales at version 1 with a new state store id (not %s)", o, first.StateStoreID)
		}

		g := newFixtureOn(t, be, jobOpts{})
		g.addCSVs("monday", 2, 20)
		if _, r := g.run([]string{"TIDEMARK_FAULT=after-stage"}); r.signal != syscall.SIGKILL {
			t.Fatalf("run with TIDEMARK_FAULT=after-stage: want it killed\n%v", r)
		}
		if err := os.RemoveAll(filepath.Dir(g.stateFile())); err != nil {
			t.Fatal(err)
		}
		_, r = g.runExpect(2)
		assertMentions(t, r, "restore", "--adopt-sink")
		g.assertSink(nil)
	})
}

// TestRestoredStateThenReset: the state is restored from a copy older than
// the sink's output, the run is refused, and the user resets the restored
// bookmark (to its last run, with or without --purge-output, or clears
// it).
// A reset raises the bookmark version to the sink's, but the state still
// has no record of the sink's last run, so the next run is refused as
// before instead of reading that run's input again. The newest state back,
// a reset with --purge-output and a run give every record exactly once.
func TestRestoredStateThenReset(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		first := f.mustRun()
		stateDir := filepath.Dir(f.stateFile())
		backup := filepath.Join(f.dir, "backup")
		copyState(t, stateDir, backup)
		tuesday := f.addCSVs("tuesday", 2, 20)
		second := f.mustRun()
		newest := filepath.Join(f.dir, "newest")
		copyState(t, stateDir, newest)
		restore := func(from string) {
			t.Helper()
			if err := os.RemoveAll(stateDir); err != nil {
				t.Fatal(err)
			}
			copyState(t, from, stateDir)
		}

		for _, reset := range [][]string{
			{"--to-run", first.RunID, "--purge-output"},
			{"--to-run", first.RunID},
			{}, // cleared
		} {
			restore(backup)
			f.runExpect(2)
			f.reset(reset...)
			_, r := f.runExpect(2)
			assertMentions(t, r, second.RunID, "restore", "--adopt-sink", "expect it twice")
			f.assertSink(concat(monday, tuesday))
		}

		restore(newest)
		f.reset("--to-run", first.RunID, "--purge-output")
		f.assertSink(monday)
		assertFiles(t, "the run after the rewind", f.mustRun(), 2)
		f.assertSink(concat(monday, tuesday))
		f.assertNoDuplicates()
	})
}

// TestSinkInsideAnotherJobsSink: job other is given a sink path inside the
// sink location of job sales (one of its partition folders). It is refused
// (exit 2, naming sales) before it writes anything there, so sales's
// readers never take other's rows for its own; --adopt-sink writes there
// on purpose.
func TestSinkInsideAnotherJobsSink(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		f := newFixtureOn(t, be, jobOpts{})
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()

		inner := strings.TrimSuffix(f.out.loc(), "/") + "/product=widget/"
		g := newFixtureOn(t, be, jobOpts{name: "other"})
		g.gen = f.gen
		writeFile(t, g.jobPath, []byte(jobOpts{name: "other"}.yaml(g.in.loc(), inner)))
		theirs := g.addCSVs("theirs", 1, 10)
		_, r := g.runExpect(2)
		assertMentions(t, r, "inside", `"sales"`, f.stateFile(), "--adopt-sink")
		f.assertSink(monday)

		// On purpose; sales's readers now see other's rows, in its widget
		// partition.
		assertFiles(t, "the run writing there on purpose", g.mustRun("--adopt-sink"), 1)
		if got, want := len(f.readSink()), len(monday)+len(theirs); got != want {
			t.Errorf("sales's sink after other wrote inside it: %d rows, want %d", got, want)
		}
	})
}

// TestDisableRunWithLostState: a full-refresh job (bookmark: disable,
// mode: overwrite) whose state is not kept between runs (a fresh container
// each time, say). A disable run reads all input whatever its state knows,
// so another state of the job is no reason to refuse it: each run replaces
// the output, exit 0. Another job is still refused, and so is an enable
// run of a state that has no record of the output.
func TestDisableRunWithLostState(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		opts := jobOpts{top: []string{"bookmark: disable"}, mode: "overwrite"}
		f := newFixtureOn(t, be, opts)
		monday := f.addCSVs("monday", 2, 20)
		f.mustRun()
		for i := range 2 {
			if err := os.RemoveAll(filepath.Dir(f.stateFile())); err != nil {
				t.Fatal(err)
			}
			assertFiles(t, fmt.Sprintf("disable run %d with a new state", i+2), f.mustRun(), 2)
			f.assertSink(monday)
		}
		_, r := f.runExpect(2, "--job-bookmark-option", "job-bookmark-enable")
		assertMentions(t, r, "restore", "--adopt-sink")

		g := f.otherJob("other")
		writeFile(t, g.jobPath, []byte(jobOpts{name: "other", top: opts.top, mode: opts.mode}.yaml(g.in.loc(), f.out.loc())))
		g.addCSVs("theirs", 1, 10)
		_, r = g.runExpect(2)
		assertMentions(t, r, `"sales"`)
		f.assertSink(monday)
	})
}
