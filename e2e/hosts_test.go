package e2e

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runHosts are the host ids of `runs --json`, newest first.
func (f *fixture) runHosts() []string {
	f.t.Helper()
	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	if r.code != 0 {
		f.t.Fatalf("runs: got exit %d, want 0\n%v", r.code, r)
	}
	var runs []struct {
		Host string `json:"host"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		f.t.Fatalf("decoding runs --json: %v\n%v", err, r)
	}
	hosts := make([]string, len(runs))
	for i, run := range runs {
		hosts[i] = run.Host
	}
	return hosts
}

// TestHostIdentity: each run records its host id — TIDEMARK_HOST_ID, or
// --host-id, which wins — and runs shows it; a run that finds the lease
// held exits 3 naming the holder's host id; a later run with that id on
// the same machine takes over the lease of the holder once it is dead.
func TestHostIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	input := f.addCSVs("a", 1, 10)
	if _, r := f.run([]string{"TIDEMARK_HOST_ID=alpha"}); r.code != 0 {
		t.Fatalf("run on alpha: got exit %d\n%v", r.code, r)
	}
	input = append(input, f.addCSVs("b", 1, 10)...)
	s, r := f.run([]string{"TIDEMARK_HOST_ID=alpha"}, "--host-id", "beta")
	if r.code != 0 {
		t.Fatalf("run on beta: got exit %d\n%v", r.code, r)
	}
	var withHost struct {
		Host string `json:"host"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &withHost); err != nil || withHost.Host != "beta" {
		t.Errorf("run --json: host %q (%v), want beta", withHost.Host, err)
	}
	if got := f.runHosts(); strings.Join(got, ",") != "beta,alpha" {
		t.Errorf("runs --json hosts: got %v, want [beta alpha] (newest first)", got)
	}
	human := f.tidemark(nil, "runs", f.jobPath)
	for _, id := range []string{s.RunID, "alpha", "beta", "HOST"} {
		if !strings.Contains(human.stdout, id) {
			t.Errorf("runs does not show %q\n%v", id, human)
		}
	}

	input = append(input, f.addCSVs("c", 1, 10)...)
	holder := f.start([]string{"TIDEMARK_HOST_ID=holder-x", "TIDEMARK_FAULT=after-plan:sleep=2m"}, "run", f.jobPath)
	holder.waitFor(t, "fault: paused at after-plan", time.Minute)
	_, r = f.run([]string{"TIDEMARK_HOST_ID=gamma"})
	if r.code != 3 {
		t.Fatalf("run beside holder-x: got exit %d, want 3\n%v", r.code, r)
	}
	if !strings.Contains(r.stderr, "holder-x") {
		t.Errorf("the exit-3 message does not name the holder's host id holder-x\n%v", r)
	}
	if v := assertFailureJSON(t, r, 3, "lease_held"); v.Holder == nil || v.Holder.Host != "holder-x" {
		t.Errorf("run --json on exit 3: holder %+v, want host holder-x", v.Holder)
	}
	if err := holder.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f.check(holder.wait(t))
	// Its lease has not expired; its host id is this one's and its process
	// is gone, so the run takes it over at once.
	if _, r := f.run([]string{"TIDEMARK_HOST_ID=holder-x"}); r.code != 0 {
		t.Fatalf("rerun on holder-x after its run was killed: got exit %d, want 0\n%v", r.code, r)
	}
	f.assertSink(input)
	if got := f.runHosts(); len(got) != 4 || got[0] != "holder-x" || got[1] != "holder-x" {
		t.Errorf("runs --json hosts: got %v, want holder-x twice (the killed run and the rerun), then beta and alpha", got)
	}
}

// TestLostLeaseNeverPublishes: a run stalled (SIGSTOP) past its lease TTL
// after staging its output loses its lease to a run from another host,
// which deletes what the stalled run staged and publishes the input
// itself; the stalled run, resumed, is refused by the fencing token and
// publishes nothing. Every record is in the sink once.
func TestLostLeaseNeverPublishes(t *testing.T) {
	t.Parallel()
	eachStateStore(t, func(t *testing.T, ss stateStore) {
		f, _ := stateOn(t, local, ss, jobOpts{})
		input := f.addCSVs("a", 3, 20)
		stalled := f.start([]string{"TIDEMARK_HOST_ID=stalled", "TIDEMARK_FAULT=after-stage:sleep=2s"},
			"run", f.jobPath, "--json", "--lease-ttl", "1s")
		stalled.waitFor(t, "fault: paused at after-stage", time.Minute)
		if err := stalled.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer stalled.cmd.Process.Signal(syscall.SIGCONT)
		if len(f.stagedFiles()) == 0 {
			t.Fatalf("the stalled run staged nothing under %s_tidemark/", f.out.loc())
		}

		// The lease expires one TTL after its last renewal, on the store's
		// clock; until then the other host is told it is held.
		deadline := time.Now().Add(time.Minute)
		var s runSummary
		for {
			var r result
			s, r = f.run([]string{"TIDEMARK_HOST_ID=taker"})
			if r.code == 0 {
				break
			}
			if r.code == 1 && (strings.Contains(r.stderr, "locked") || strings.Contains(r.stderr, "busy")) {
				// Stopped inside a write transaction of the state store, the
				// stalled run holds its lock: let it finish that, then stop
				// it again.
				_ = stalled.cmd.Process.Signal(syscall.SIGCONT)
				time.Sleep(20 * time.Millisecond)
				_ = stalled.cmd.Process.Signal(syscall.SIGSTOP)
				continue
			}
			if r.code != 3 || !strings.Contains(r.stderr, "stalled") {
				t.Fatalf("run beside the stalled one: got exit %d, want 3 naming host stalled, then 0\n%v", r.code, r)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stalled run's lease did not expire within a minute\n%v", r)
			}
			time.Sleep(200 * time.Millisecond)
		}
		assertFiles(t, "the run that took the lease", s, 3)
		if left := f.stagedFiles(); len(left) > 0 {
			t.Errorf("after the run that took the lease, the stalled run's staged files are left: %v", firstFew(left))
		}
		f.assertSink(input)

		if err := stalled.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		r := stalled.wait(t)
		if r.code != 1 || !strings.Contains(r.stdout, "lease lost") {
			t.Errorf("the stalled run, resumed: got exit %d, want 1 saying its lease was lost\n%v", r.code, r)
		}
		f.assertSink(input)
		f.assertNoDuplicates()
		if left := f.stagedFiles(); len(left) > 0 {
			t.Errorf("staged files left: %v", firstFew(left))
		}
		assertFiles(t, "the next run", f.mustRun(), 0)
	})
}
