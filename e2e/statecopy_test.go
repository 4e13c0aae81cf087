package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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
	if r.code != 2 || !strings.Contains(r.stderr, `job "sales" already has state`) {
		t.Errorf("copying again: got exit %d, want 2 saying the job already has state there\n%v", r.code, r)
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
