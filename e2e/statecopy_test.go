package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStateCopy: `state copy` moves a job's whole state — a history with
// a rewind that purged output, runs of every outcome — to another store:
// bookmark show and runs print the same there, the next run from the copy
// reads nothing old and publishes into the same sink (the copy may claim
// it), and a second copy into the same store is refused.
func TestStateCopy(t *testing.T) {
	t.Parallel()
	eachStateStore(t, func(t *testing.T, from stateStore) {
		for _, to := range stateStores {
			t.Run("to_"+to.name, func(t *testing.T) {
				t.Parallel()
				testStateCopy(t, from, to)
			})
		}
	})
}

func testStateCopy(t *testing.T, from, to stateStore) {
	f, src := stateOn(t, local, from, jobOpts{})
	dst, env := to.url(t)
	f.env = append(f.env, env...)
	monday := f.addCSVs("monday", 2, 10)
	first := f.mustRun()
	tuesday := f.addCSVs("tuesday", 2, 10)
	f.mustRun()
	f.reset("--to-run", first.RunID, "--purge-output")
	f.mustRun() // reads tuesday again
	wednesday := f.addCSVs("wednesday", 1, 10)
	f.mustRun("--host-id", "worker-w")
	f.assertSink(concat(monday, tuesday, wednesday))

	bookmarkBefore := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
	runsBefore := f.tidemark(nil, "runs", f.jobPath, "--json")
	r := f.tidemark(nil, "state", "copy", "--from", src, "--to", dst, "--job", "sales", "--json")
	if r.code != 0 {
		t.Fatalf("state copy: got exit %d, want 0\n%v", r.code, r)
	}
	var sums []struct {
		Job  string `json:"job"`
		Runs int    `json:"runs"`
		Head int64  `json:"head"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil || len(sums) != 1 || sums[0].Job != "sales" || sums[0].Runs != 4 {
		t.Errorf("state copy --json: got %q (%v), want one job sales with 4 runs", r.stdout, err)
	}
	bookmarkAfter := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json", "--state", dst)
	runsAfter := f.tidemark(nil, "runs", f.jobPath, "--json", "--state", dst)
	for _, c := range []struct {
		what          string
		before, after result
	}{{"bookmark show --json", bookmarkBefore, bookmarkAfter}, {"runs --json", runsBefore, runsAfter}} {
		if c.before.code != 0 || c.after.code != 0 {
			t.Fatalf("%s: got exits %d and %d, want 0\n%v\n%v", c.what, c.before.code, c.after.code, c.before, c.after)
		}
		if !jsonEqual(t, c.before.stdout, c.after.stdout) {
			t.Errorf("%s differs after the copy:\nbefore %s\nafter  %s", c.what, c.before.stdout, c.after.stdout)
		}
	}
	if !strings.Contains(runsAfter.stdout, `"host":"worker-w"`) {
		t.Errorf("runs --json from the copy does not show the host id worker-w: %s", runsAfter.stdout)
	}

	// The job now runs from the copy: nothing old is read again.
	s := f.mustRun("--state", dst)
	assertFiles(t, "the first run from the copy", s, 0)
	thursday := f.addCSVs("thursday", 2, 10)
	s = f.mustRun("--state", dst)
	assertFiles(t, "the second run from the copy", s, 2)
	f.assertSink(concat(monday, tuesday, wednesday, thursday))
	f.assertNoDuplicates()
	// The store copied from no longer owns the sink: the copy published
	// runs it does not know.
	f.addCSVs("friday", 1, 10)
	if _, r := f.runExpect(2); !strings.Contains(r.stdout, "sink_owned") {
		t.Errorf("a run from the store copied from: want it refused as sink_owned\n%v", r)
	}
	f.assertSink(concat(monday, tuesday, wednesday, thursday))

	// A second copy into a store that has the job is refused, naming it.
	r = f.tidemark(nil, "state", "copy", "--from", src, "--to", dst)
	if r.code != 2 || !strings.Contains(r.stderr, `job "sales" (bookmark version`) || !strings.Contains(r.stderr, "already has state in this store") {
		t.Errorf("copying again: got exit %d, want 2 saying the job already has state there\n%v", r.code, r)
	}
	if strings.Contains(r.stderr, "--help") {
		t.Errorf("a refused copy points to --help, as if a flag were wrong\n%v", r)
	}
}

// jsonEqual reports whether two JSON documents hold the same values.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("decoding %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("decoding %q: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// TestStateCopyRefused: state copy refuses, with exit 2 and a message
// naming the problem, a source with no state, a copy onto the same store
// and a job the source does not hold; and with exit 3 a job whose lease a
// run holds. None of them writes anything.
func TestStateCopyRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 1, 5)
	f.mustRun()
	src := f.stateFile()
	dst := filepath.Join(t.TempDir(), "copy.db")
	for _, c := range []struct {
		what string
		args []string
		code int
		says string
	}{
		{"no state at --from", []string{"--from", filepath.Join(t.TempDir(), "none.db"), "--to", dst}, 2, "no state store"},
		{"the same store", []string{"--from", src, "--to", src}, 2, "are the same state store"},
		{"an unknown job", []string{"--from", src, "--to", dst, "--job", "nosuch"}, 2, `"nosuch"`},
		{"no --to", []string{"--from", src}, 2, "needs --from and --to"},
	} {
		r := f.tidemark(nil, append([]string{"state", "copy"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.says) {
			t.Errorf("state copy with %s: got exit %d, want %d saying %q\n%v", c.what, r.code, c.code, c.says, r)
		}
	}
	if _, err := os.Stat(dst); err == nil {
		if r := f.tidemark(nil, "runs", "sales", "--state", dst); r.code != 2 {
			t.Errorf("a refused copy left state of the job in %s\n%v", dst, r)
		}
	}

	f.addCSVs("b", 1, 5)
	p := f.start([]string{"TIDEMARK_HOST_ID=busy-host", "TIDEMARK_FAULT=after-plan:sleep=2m"}, "run", f.jobPath)
	p.waitFor(t, "fault: paused at after-plan", time.Minute)
	r := f.tidemark(nil, "state", "copy", "--from", src, "--to", dst)
	if r.code != 3 || !strings.Contains(r.stderr, "busy-host") {
		t.Errorf("state copy of a job being run: got exit %d, want 3 naming the holder busy-host\n%v", r.code, r)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f.check(p.wait(t))
}
