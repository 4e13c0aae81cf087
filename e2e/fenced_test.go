package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFencedAfterCommitSaysPublished: a run stalled past its lease TTL
// after it committed loses its lease to a run from another host, which
// rolls the committed run forward (publishes it). The stalled run,
// resumed, fails to mark it published (fenced out) and must say that its
// output was published meanwhile, not that it is staged for the next run.
func TestFencedAfterCommitSaysPublished(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	input := f.addCSVs("a", 2, 10)
	stalled := f.start([]string{"TIDEMARK_HOST_ID=stalled", "TIDEMARK_FAULT=after-commit:sleep=2s"},
		"run", f.jobPath, "--json", "--lease-ttl", "1s")
	stalled.waitFor(t, "fault: paused at after-commit", time.Minute)
	if err := stalled.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer stalled.cmd.Process.Signal(syscall.SIGCONT)
	deadline := time.Now().Add(time.Minute)
	for {
		_, r := f.run([]string{"TIDEMARK_HOST_ID=taker"})
		if r.code == 0 {
			if !strings.Contains(r.stderr, "rolling forward") {
				t.Errorf("the run that took the lease did not roll the committed run forward\n%v", r)
			}
			break
		}
		if r.code == 1 && (strings.Contains(r.stderr, "locked") || strings.Contains(r.stderr, "busy")) {
			_ = stalled.cmd.Process.Signal(syscall.SIGCONT)
			time.Sleep(20 * time.Millisecond)
			_ = stalled.cmd.Process.Signal(syscall.SIGSTOP)
			continue
		}
		if r.code != 3 || time.Now().After(deadline) {
			t.Fatalf("run beside the stalled one: got exit %d, want 3 until its lease expires, then 0\n%v", r.code, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	f.assertSink(input)
	if err := stalled.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r := stalled.wait(t)
	f.check(r)
	if r.code == 0 {
		return // it finished its publish before it noticed the lost lease: nothing to say
	}
	if strings.Contains(r.stderr, "the output is staged and the next") {
		t.Errorf("the fenced run says its output is staged for the next run, but it was published\n%v", r)
	}
	if !strings.Contains(r.stderr, "is published") {
		t.Errorf("the fenced run does not say its output is published\n%v", r)
	}
	f.assertSink(input)
	f.assertNoDuplicates()
}
