package tidemark

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// fastPublishRetries makes a failing publish give up at once.
func fastPublishRetries(t *testing.T) {
	attempts, backoff := publishAttempts, publishBackoff
	publishAttempts, publishBackoff = 2, time.Millisecond
	t.Cleanup(func() { publishAttempts, publishBackoff = attempts, backoff })
}

// stagingRun is the id of the one run with a staging folder in the sink.
func (w *world) stagingRun() string {
	w.t.Helper()
	ents, err := os.ReadDir(filepath.Join(w.out, "_tidemark", "staging"))
	if err != nil || len(ents) != 1 {
		w.t.Fatalf("staging folders: got %v (%v), want one", ents, err)
	}
	return ents[0].Name()
}

// unpublished lists the job's committed runs not yet published.
func (w *world) unpublished() []string {
	w.t.Helper()
	runs, err := w.store().Unpublished(w.t.Context(), jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	return ids
}

// TestRollForwardAfterCommitCrash: a run that died between its commit and
// its publish is published by the next run before it does anything else.
func TestRollForwardAfterCommitCrash(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	var crashed string
	w.runCrashing(fault.AfterCommit, func() { crashed = w.stagingRun() })
	if w.head() == 0 {
		t.Fatal("the crashed run did not commit")
	}
	w.wantLines()
	if got := w.unpublished(); !slices.Equal(got, []string{crashed}) {
		t.Fatalf("unpublished: got %q, want [%s]", got, crashed)
	}
	w.write("b.csv", "2")
	res := w.run(RunOptions{})
	w.wantLines("1", "2")
	if got := w.unpublished(); len(got) > 0 {
		t.Errorf("unpublished after the roll-forward: %q", got)
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staging left after the roll-forward: %q", left)
	}
	if got := res.Sources["in"]; got.Files != 1 || got.Rows != 1 {
		t.Errorf("second run's source count: got %+v, want 1 file, 1 row (b.csv alone)", got)
	}
	_, files := w.published()
	if want := "part-" + crashed + "-00000.csv"; !slices.Contains(files, want) {
		t.Errorf("published files: got %q, want the crashed run's %s", files, want)
	}
}

// TestCrashBeforeCommit: a run that died after staging and before its
// commit is marked failed by the next run, which deletes its staged
// output and reads its input again.
func TestCrashBeforeCommit(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	var dead string
	w.runCrashing(fault.AfterStage, func() { dead = w.stagingRun() })
	if rec := w.runRecord(dead); rec.Status != store.StatusRunning {
		t.Fatalf("crashed run's status: got %s, want running", rec.Status)
	}
	if len(w.staged()) == 0 {
		t.Fatal("the crashed run staged nothing")
	}
	res := w.run(RunOptions{})
	rec := w.runRecord(dead)
	if rec.Status != store.StatusFailed || !strings.Contains(rec.Error, "died before it committed") {
		t.Errorf("dead run: got status %s error %q, want failed, died before it committed", rec.Status, rec.Error)
	}
	if got := res.Sources["in"]; got.Files != 1 {
		t.Errorf("next run's files: got %d, want 1 (the dead run's input)", got.Files)
	}
	w.wantLines("1")
	if left := w.staged(); len(left) > 0 {
		t.Errorf("dead run's staging left: %q", left)
	}
}

// TestRollForwardAfterPublishCrash: a run that died after moving its files
// but before being marked published is published again, idempotently: no
// file twice, no error.
func TestRollForwardAfterPublishCrash(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.runCrashing(fault.AfterPublish, nil)
	w.wantLines("1")
	if len(w.unpublished()) != 1 {
		t.Fatalf("unpublished: got %q, want the crashed run", w.unpublished())
	}
	w.run(RunOptions{})
	w.wantLines("1")
	if got := w.unpublished(); len(got) > 0 {
		t.Errorf("unpublished after the roll-forward: %q", got)
	}
}

// TestPublishTwice: publishing a published run again changes nothing.
func TestPublishTwice(t *testing.T) {
	w := newWorld(t)
	w.sinkMode = "overwrite"
	w.write("a.csv", "1")
	w.run(RunOptions{})
	w.write("b.csv", "2")
	res := w.run(RunOptions{})
	w.wantLines("2")
	_, before := w.published()
	st := w.store()
	l, err := st.AcquireLease(t.Context(), jobName, store.Holder{ID: "test"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := publish(t.Context(), st, jobName, l.Token, res.RunID, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatalf("publishing again: %v", err)
		}
	}
	_, after := w.published()
	if !slices.Equal(before, after) {
		t.Errorf("published files: got %q after publishing again, want %q", after, before)
	}
}

// TestOverwriteAppliedOnce: an overwrite run deletes what earlier runs
// published, and a roll-forward of it (crashed mid-publish) does not
// delete its own files.
func TestOverwriteAppliedOnce(t *testing.T) {
	w := newWorld(t)
	w.sinkMode = "overwrite"
	w.write("a.csv", "1")
	w.run(RunOptions{})
	w.write("b.csv", "2")
	w.runCrashing(fault.AfterPublish, nil)
	w.wantLines("2")
	w.write("c.csv", "3")
	w.run(RunOptions{})
	w.wantLines("3")
}

// TestUnpublishedError: a committed run whose publish keeps failing is an
// *UnpublishedError; its record stays succeeded, and the next run
// publishes it first.
func TestUnpublishedError(t *testing.T) {
	fastPublishRetries(t)
	w := newWorld(t)
	w.write("a.csv", "1")
	var blocker string
	at(t, fault.AfterCommit, func() {
		// A folder where the file is to be published.
		blocker = filepath.Join(w.out, "part-"+w.stagingRun()+"-00000.csv")
		if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	})
	res, err := w.runErr(RunOptions{})
	var up *UnpublishedError
	if !errors.As(err, &up) || up.RunID != res.RunID {
		t.Fatalf("error: got %v, want an *UnpublishedError of run %s", err, res.RunID)
	}
	if !strings.Contains(err.Error(), "the next `tidemark run`") {
		t.Errorf("error: got %q, want it to say the next run publishes it", err)
	}
	if res.Status != store.StatusFailed {
		t.Errorf("result status: got %s, want failed", res.Status)
	}
	if rec := w.runRecord(res.RunID); rec.Status != store.StatusSucceeded {
		t.Errorf("run record: got %s, want succeeded (committed)", rec.Status)
	}
	if got := w.unpublished(); !slices.Equal(got, []string{res.RunID}) {
		t.Errorf("unpublished: got %q, want [%s]", got, res.RunID)
	}
	fault.Hook = nil
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	w.run(RunOptions{})
	w.wantLines("1")
	if got := w.unpublished(); len(got) > 0 {
		t.Errorf("unpublished after the next run: %q", got)
	}
}

// loseStaged deletes the running run's staged files after its commit, so
// that its publish finds its output lost.
func (w *world) loseStaged() {
	at(w.t, fault.AfterCommit, func() {
		if err := os.RemoveAll(filepath.Join(w.out, "_tidemark", "staging", w.stagingRun(), "data")); err != nil {
			w.t.Fatal(err)
		}
	})
}

// TestOutputLostHint: a committed run whose staged output is gone says how
// to read its input again: rewind to the enable run before it, or clear
// the bookmark when there is none.
func TestOutputLostHint(t *testing.T) {
	fastPublishRetries(t)
	w := newWorld(t)
	w.write("a.csv", "1")
	w.loseStaged()
	_, err := w.runErr(RunOptions{})
	if !errors.Is(err, sink.ErrOutputLost) || !strings.Contains(err.Error(), "no earlier run to rewind to") ||
		!strings.Contains(err.Error(), "bookmark reset "+jobName+" --purge-output") {
		t.Errorf("first run's error: got %v, want output lost and a hint to clear the bookmark", err)
	}

	w = newWorld(t)
	w.write("a.csv", "1")
	first := w.run(RunOptions{})
	w.write("b.csv", "2")
	w.loseStaged()
	res, err := w.runErr(RunOptions{})
	if !errors.Is(err, sink.ErrOutputLost) || !strings.Contains(err.Error(), "--to-run "+first.RunID+" --purge-output") {
		t.Errorf("second run's error: got %v, want a hint to rewind to %s", err, first.RunID)
	}
	fault.Hook = nil
	// The next run cannot roll it forward either.
	if _, err := w.runErr(RunOptions{}); !strings.Contains(err.Error(), "recovering earlier runs") {
		t.Errorf("next run's error: got %v, want a failure to recover", err)
	}
	// The rewind the hint names gives the lost run up and reads b again.
	rr, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: first.RunID, Purge: true})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	if !slices.Equal(rr.Undone, []string{res.RunID}) {
		t.Errorf("undone: got %q, want [%s]", rr.Undone, res.RunID)
	}
	w.run(RunOptions{})
	w.wantLines("1", "2")
}

// TestLeaseHeld: a run or reset of a job whose lease another live run
// holds is refused with store.ErrLeaseHeld, and records nothing.
func TestLeaseHeld(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.run(RunOptions{})
	host, _ := os.Hostname()
	st := w.store()
	if _, err := st.AcquireLease(t.Context(), jobName, store.Holder{ID: "other", Host: host, PID: os.Getpid()}, time.Minute); err != nil {
		t.Fatal(err)
	}
	w.write("b.csv", "2")
	if _, err := w.runErr(RunOptions{}); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("run: got %v, want store.ErrLeaseHeld", err)
	}
	if _, err := Reset(t.Context(), st, jobName, ResetOptions{}); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("reset: got %v, want store.ErrLeaseHeld", err)
	}
	runs, err := st.Runs(t.Context(), jobName, store.RunQuery{})
	if err != nil || len(runs) != 1 {
		t.Errorf("runs: got %d (%v), want 1 (nothing recorded)", len(runs), err)
	}
}

// TestLeaseOfDeadProcess: the lease of a process on this host that is gone
// is taken over at once, whether its holder names the host by its default
// id (hostname:pid), by the id this run has, or (an older tidemark) by the
// bare hostname.
func TestLeaseOfDeadProcess(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name   string
		holder func(pid int) string
		mine   string
	}{
		{"default id", func(pid int) string { return host + ":" + strconv.Itoa(pid) }, ""},
		{"same given id", func(int) string { return "worker-7" }, "worker-7"},
		{"bare hostname", func(int) string { return host }, "worker-7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.write("a.csv", "1")
			pid := deadPID(t)
			if _, err := w.store().AcquireLease(t.Context(), jobName, store.Holder{ID: "dead", Host: tc.holder(pid), PID: pid}, time.Hour); err != nil {
				t.Fatal(err)
			}
			w.run(RunOptions{HostID: tc.mine})
			w.wantLines("1")
		})
	}
}

// TestLeaseOfOtherHost: the lease of a holder with another host id is not
// taken over, even if no process of this machine has its pid: it may run
// elsewhere.
func TestLeaseOfOtherHost(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	pid := deadPID(t)
	if _, err := w.store().AcquireLease(t.Context(), jobName, store.Holder{ID: "other", Host: "worker-2", PID: pid}, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := w.runErr(RunOptions{HostID: "worker-1"})
	var held *store.LeaseHeldError
	if !errors.As(err, &held) || held.Holder.Host != "worker-2" {
		t.Fatalf("run beside worker-2's lease: got %v, want a LeaseHeldError naming worker-2", err)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	proc, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("no /bin/true:", err)
	}
	if _, err := proc.Wait(); err != nil {
		t.Fatal(err)
	}
	return proc.Pid
}

// TestConcurrentRun: while a run executes, another run of the job is
// refused; the first then finishes.
func TestConcurrentRun(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.fake.started, w.fake.release = make(chan int), make(chan struct{})
	spec := w.spec()
	done := make(chan error)
	go func() {
		_, err := Run(t.Context(), spec, RunOptions{})
		done <- err
	}()
	<-w.fake.started
	if _, err := Run(t.Context(), w.spec(), RunOptions{}); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("second run: got %v, want store.ErrLeaseHeld", err)
	}
	close(w.fake.release)
	if err := <-done; err != nil {
		t.Fatalf("first run: %v", err)
	}
	w.wantLines("1")
}

// TestLeaseLost: a run whose lease is broken while it executes stops
// before it commits, with store.ErrLeaseLost.
func TestLeaseLost(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.fake.started, w.fake.release = make(chan int), make(chan struct{}) // never released
	spec := w.spec()
	done := make(chan error)
	go func() {
		_, err := Run(t.Context(), spec, RunOptions{LeaseTTL: 300 * time.Millisecond})
		done <- err
	}()
	<-w.fake.started
	st := w.store()
	_, err := st.AcquireLease(t.Context(), jobName, store.Holder{ID: "thief"}, time.Minute)
	var held *store.LeaseHeldError
	if !errors.As(err, &held) {
		t.Fatalf("acquiring the running job's lease: got %v, want a *store.LeaseHeldError", err)
	}
	if err := st.BreakLease(t.Context(), jobName, held.Token); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("run: got %v, want store.ErrLeaseLost", err)
	}
	if got := w.head(); got != 0 {
		t.Errorf("bookmark version: got %d, want 0", got)
	}
	w.wantLines()
}

// TestSinkOwned: a sink another job owns is refused before a run is
// recorded; AdoptSink hands it over.
func TestSinkOwned(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.run(RunOptions{})
	_, err := Run(t.Context(), w.spec(), RunOptions{JobName: "other"})
	var owned *sink.OwnedError
	if !errors.As(err, &owned) || owned.Sink != "out" || owned.Job != "other" {
		t.Fatalf("run of another job: got %v, want a *sink.OwnedError of sink out", err)
	}
	if runs, _ := w.store().Runs(t.Context(), "other", store.RunQuery{}); len(runs) != 0 {
		t.Errorf("runs of the refused job: got %d, want none", len(runs))
	}
	if _, err := Run(t.Context(), w.spec(), RunOptions{JobName: "other", AdoptSink: true}); err != nil {
		t.Fatalf("run adopting the sink: %v", err)
	}
	w.wantLines("1", "1")
}

// TestRereadHint: the hint names the newest enable run before the lost
// one, never a later one, and says to clear the bookmark when there is
// none.
func TestRereadHint(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	st := w.store()
	if got := rereadHint(t.Context(), st, jobName, ids[1]); !strings.Contains(got, "--to-run "+ids[0]+" ") {
		t.Errorf("hint for the second run: got %q, want it to name %s", got, ids[0])
	}
	if got := rereadHint(t.Context(), st, jobName, ids[2]); !strings.Contains(got, "--to-run "+ids[1]+" ") {
		t.Errorf("hint for the third run: got %q, want it to name %s", got, ids[1])
	}
	if got := rereadHint(t.Context(), st, jobName, ids[0]); !strings.HasPrefix(got, "no earlier run to rewind to") {
		t.Errorf("hint for the first run: got %q, want no earlier run", got)
	}
}
