package e2e

import (
	"strings"
	"syscall"
	"testing"
)

// TestStateCopyChainAwkwardPoints copies one job's state sqlite →
// postgres → s3 at awkward points of its history: right after a run
// killed between two batches (its lease still held by the dead process),
// after a failed run, after a reset --to-run with --purge-output, and
// with a run killed mid-write whose staging is left behind. After each
// copy the job goes on from the copy; every input record ends up in the
// sink exactly once, and each store copied from is refused.
func TestStateCopyChainAwkwardPoints(t *testing.T) {
	t.Parallel()
	f, sqlite := stateOn(t, local, stateStores[0], jobOpts{top: []string{"batch_files: 1"}})
	pg, pgEnv := stateStores[1].url(t)
	s3, s3Env := stateStores[2].url(t)
	f.env = append(append(f.env, pgEnv...), s3Env...)
	copyTo := func(from, to string) {
		t.Helper()
		// A killed run's lease is still held, by a process of this machine
		// that is gone: the copy goes on at once, as a run would.
		if r := f.tidemark(nil, "state", "copy", "--from", from, "--to", to, "--job", "sales"); r.code != 0 {
			t.Fatalf("state copy %s -> %s: got exit %d, want 0\n%v", from, to, r.code, r)
		}
	}

	// sqlite: a run killed after its first batch; copied at once.
	monday := f.addCSVs("monday", 3, 10)
	if _, r := f.run([]string{"TIDEMARK_FAULT=after-batch"}); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=after-batch: want it killed after its first batch\n%v", r)
	}
	copyTo(sqlite, pg)
	s := f.mustRun("--state", pg)
	assertFiles(t, "the run from postgres after the killed batch run", s, 2)
	f.assertSink(monday)
	f.assertNoDuplicates()
	if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("a run from sqlite after postgres published: want sink_owned\n%v", r)
	}

	// postgres: a failed run (a bad file), a reset --to-run with purge,
	// then a run killed mid-read (staging left); copied to s3.
	tuesday := f.addCSVs("tuesday", 1, 10)
	first := f.mustRun("--state", pg)
	f.put("bad.csv", []byte("order_id,customer_id,product,amount\n1,C1,widget,notanumber\n"))
	if _, r := f.run(nil, "--state", pg); r.code != 1 {
		t.Fatalf("the run over a bad file: got exit %d, want 1\n%v", r.code, r)
	}
	f.remove("bad.csv")
	wednesday := f.addCSVs("wednesday", 1, 10)
	f.mustRun("--state", pg)
	if r := f.tidemark(nil, "bookmark", "reset", f.jobPath, "--state", pg, "--to-run", first.RunID, "--purge-output"); r.code != 0 {
		t.Fatalf("reset --to-run: got exit %d\n%v", r.code, r)
	}
	f.assertSink(concat(monday, tuesday))
	thursday := f.addCSVs("thursday", 1, 10)
	if _, r := f.run([]string{"TIDEMARK_FAULT=mid-read"}, "--state", pg); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=mid-read: want it killed\n%v", r)
	}
	copyTo(pg, s3)
	s = f.mustRun("--state", s3)
	assertFiles(t, "the run from s3", s, 2) // wednesday again and thursday, in two batches of one
	f.assertSink(concat(monday, tuesday, wednesday, thursday))
	f.assertNoDuplicates()
	if left := f.stagedFiles(); len(left) > 0 {
		t.Errorf("staged files left after the run from s3: %v", left)
	}
	for _, st := range []string{sqlite, pg} {
		f.addCSVs("late-"+st[len(st)-4:], 1, 5)
		if _, r := f.run(nil, "--state", st); r.code != 2 || !strings.Contains(r.stdout, "sink_owned") {
			t.Errorf("a run from %s after s3 published: got exit %d, want 2 sink_owned\n%v", st, r.code, r)
		}
	}
}
