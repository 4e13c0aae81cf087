package e2e

import (
	"strings"
	"testing"
)

// TestDisable: a disabled run reads everything and leaves the bookmark as it
// was, so the next enabled run reads only what is new since the last
// enabled run. Its output is published like any run's: the sink then holds
// Monday's records twice, which is what disable means.
func TestDisable(t *testing.T) {
	t.Parallel()
	eachBackend(t, testDisable)
}

func testDisable(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	monday := f.addCSVs("monday", 4, 20)
	f.mustRun()
	before := f.bookmark()

	s := f.mustRun("--job-bookmark-option", "job-bookmark-disable")
	assertFiles(t, "disabled run", s, 4)
	if !strings.Contains(s.Mode, "disable") {
		t.Errorf("disabled run: mode = %q, want disable", s.Mode)
	}
	assertRecords(t, "the disabled run's output", f.sinkRun(s.RunID), monday)
	after := f.bookmark()
	if string(after.Version) != string(before.Version) || after.RunID != before.RunID || !sameSources(before, after) {
		t.Errorf("bookmark changed by a disabled run: version %s run %s -> version %s run %s",
			before.Version, before.RunID, after.Version, after.RunID)
	}

	s = f.mustRun("--job-bookmark-option", "disable")
	assertFiles(t, "second disabled run (short spelling)", s, 4)

	tuesday := f.addCSVs("tuesday", 2, 20)
	s = f.mustRun()
	assertFiles(t, "enabled run after the disabled ones", s, 2)
	f.assertSink(concat(monday, monday, monday, tuesday))
}

// TestPause: a paused run reads what an enabled run would and leaves the
// bookmark alone, so a second paused run reads the same files again, and the
// next enabled run reads them too.
func TestPause(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPause)
}

func testPause(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	monday := f.addCSVs("monday", 4, 20)
	f.mustRun()
	before := f.bookmark()

	tuesday := f.addCSVs("tuesday", 3, 20)
	p1 := f.mustRun("--job-bookmark-option", "job-bookmark-pause")
	assertFiles(t, "first paused run", p1, 3)
	if !strings.Contains(p1.Mode, "pause") {
		t.Errorf("paused run: mode = %q, want pause", p1.Mode)
	}
	assertRecords(t, "the first paused run's output", f.sinkRun(p1.RunID), tuesday)
	p2 := f.mustRun("--job-bookmark-option", "pause")
	assertFiles(t, "second paused run", p2, 3)
	after := f.bookmark()
	if string(after.Version) != string(before.Version) || !sameSources(before, after) {
		t.Errorf("bookmark changed by paused runs: version %s -> %s", before.Version, after.Version)
	}

	e := f.mustRun("--job-bookmark-option", "enable")
	assertFiles(t, "enabled run after the pauses", e, 3)
	assertFiles(t, "next enabled run", f.mustRun(), 0)
	f.assertSink(concat(monday, tuesday, tuesday, tuesday))
}

// TestPauseFromTo: pause with --job-bookmark-from A --job-bookmark-to B reads
// exactly the input that the runs after A up to and including B read: not
// A's input, not files that arrived since, and it leaves the bookmark alone.
func TestPauseFromTo(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPauseFromTo)
}

func testPauseFromTo(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	a := f.addCSVs("a", 3, 15)
	r1 := f.mustRun()
	b := f.addCSVs("b", 2, 15)
	r2 := f.mustRun()
	c := f.addCSVs("c", 4, 15)
	r3 := f.mustRun()
	d := f.addCSVs("d", 2, 15) // arrives after r3: not part of any (from, to]
	before := f.bookmark()

	s := f.mustRun("--job-bookmark-option", "job-bookmark-pause",
		"--job-bookmark-from", r1.RunID, "--job-bookmark-to", r3.RunID)
	assertFiles(t, "pause from r1 to r3", s, 6)
	assertRecords(t, "pause (r1, r3] output", f.sinkRun(s.RunID), concat(b, c))

	s = f.mustRun("--job-bookmark-option", "pause",
		"--job-bookmark-from", r1.RunID, "--job-bookmark-to", r2.RunID)
	assertFiles(t, "pause from r1 to r2", s, 2)
	assertRecords(t, "pause (r1, r2] output", f.sinkRun(s.RunID), b)

	s = f.mustRun("--job-bookmark-option", "pause",
		"--job-bookmark-from", r2.RunID, "--job-bookmark-to", r3.RunID)
	assertRecords(t, "pause (r2, r3] output", f.sinkRun(s.RunID), c)

	after := f.bookmark()
	if string(after.Version) != string(before.Version) || !sameSources(before, after) {
		t.Errorf("bookmark changed by paused from/to runs: version %s -> %s", before.Version, after.Version)
	}
	s = f.mustRun()
	assertFiles(t, "enabled run after the pauses", s, 2)
	assertRecords(t, "enabled run's output", f.sinkRun(s.RunID), d)
	f.assertSink(concat(a, b, c, b, c, b, c, d))
}

// TestModeFlagErrors: from/to only with pause, both or neither; an unknown
// mode is a usage error. All exit 2 and change nothing.
func TestModeFlagErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	r1 := f.mustRun()
	f.addCSVs("b", 2, 10)
	r2 := f.mustRun()
	more := f.addCSVs("c", 1, 10)
	_ = more

	for _, flags := range [][]string{
		{"--job-bookmark-option", "pause", "--job-bookmark-from", r1.RunID},
		{"--job-bookmark-option", "pause", "--job-bookmark-to", r2.RunID},
		{"--job-bookmark-option", "enable", "--job-bookmark-from", r1.RunID, "--job-bookmark-to", r2.RunID},
		{"--job-bookmark-from", r1.RunID, "--job-bookmark-to", r2.RunID}, // default mode is enable
		{"--job-bookmark-option", "sometimes"},
	} {
		_, r := f.run(nil, flags...)
		if r.code != 2 {
			t.Errorf("run %s: got exit %d, want 2\n%v", strings.Join(flags, " "), r.code, r)
		}
	}
	if got := f.planFiles(); got != 1 {
		t.Errorf("plan after the rejected runs: files = %d, want 1 (nothing ran)", got)
	}
}
