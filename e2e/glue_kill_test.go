package e2e

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestGlueRunKilled: kill -9 of `tidemark glue run` itself (a scheduler's
// timeout) between the script's write and its job.commit(): the script
// and its Spark do not live on, orphaned, holding memory and writing into
// a dead run's staging; nothing is published, and the next run reads the
// same input into the sink exactly once.
func TestGlueRunKilled(t *testing.T) {
	w := newGlueWorld(t, local)
	next := w.land(t, "mon", 3, 1)
	p, pid := w.startGlue(t, "WRITTEN", w.args("job-bookmark-enable", "write")...)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Not <-p.done first: its Wait ends only when the script, which holds
	// its output pipes, ends.
	deadline := time.Now().Add(20 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the script (pid %d) still runs 20 s after tidemark glue run was killed", pid)
		}
		time.Sleep(200 * time.Millisecond)
	}
	<-p.done
	if got := w.ids(t); len(got) != 0 {
		t.Errorf("after kill -9 of tidemark glue run the sink holds %d orders, want none", len(got))
	}
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("the run after the kill: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after the rerun")
}

// alive reports whether process pid exists (and is not a zombie of ours).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
