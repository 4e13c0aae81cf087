package e2e

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReset: after bookmark reset the next run reads everything again. The
// old output stays (no --purge-output), so the sink holds it twice.
func TestReset(t *testing.T) {
	t.Parallel()
	eachBackend(t, testReset)
}

func testReset(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	monday := f.addCSVs("monday", 3, 20)
	f.mustRun()
	tuesday := f.addCSVs("tuesday", 2, 20)
	f.mustRun()

	f.reset()
	if got := f.planFiles(); got != 5 {
		t.Errorf("plan after reset: files = %d, want 5", got)
	}
	s := f.mustRun()
	assertFiles(t, "run after reset", s, 5)
	assertRecords(t, "the run after reset", f.sinkRun(s.RunID), concat(monday, tuesday))
	f.assertSink(concat(monday, tuesday, monday, tuesday))
	assertFiles(t, "next run", f.mustRun(), 0)
}

// TestRewind: bookmark reset --to-run RUN restores the bookmark exactly as
// RUN committed it (Glue's rewind): the next run reads what came after.
func TestRewind(t *testing.T) {
	t.Parallel()
	eachBackend(t, testRewind)
}

func testRewind(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	monday := f.addCSVs("monday", 3, 20)
	r1 := f.mustRun()
	atR1 := f.bookmark()
	tuesday := f.addCSVs("tuesday", 2, 20)
	f.mustRun()
	wednesday := f.addCSVs("wednesday", 2, 20)
	f.mustRun()

	f.reset("--to-run", r1.RunID)
	rewound := f.bookmark()
	if !sameSources(atR1, rewound) {
		t.Errorf("bookmark after reset --to-run %s differs from the one %s committed:\n got  %v\n want %v",
			r1.RunID, r1.RunID, rewound.Sources, atR1.Sources)
	}
	if got := f.planFiles(); got != 4 {
		t.Errorf("plan after rewind: files = %d, want 4", got)
	}
	s := f.mustRun()
	assertFiles(t, "run after rewind", s, 4)
	assertRecords(t, "the run after rewind", f.sinkRun(s.RunID), concat(tuesday, wednesday))
	f.assertSink(concat(monday, tuesday, wednesday, tuesday, wednesday))
}

// TestPurgeOutput: reset --to-run RUN --purge-output deletes what every
// later run published, whatever its mode (pause and disable too), so that
// rerunning gives every record exactly once; a full reset with
// --purge-output deletes everything the job published.
func TestPurgeOutput(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPurgeOutput)
}

func testPurgeOutput(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	monday := f.addCSVs("monday", 4, 20)
	r1 := f.mustRun()
	tuesday := f.addCSVs("tuesday", 3, 20)
	later := []runSummary{
		f.mustRun("--job-bookmark-option", "pause"),
		f.mustRun("--job-bookmark-option", "disable"),
		f.mustRun(),
	}
	f.assertSink(concat(monday, tuesday, monday, tuesday, tuesday))
	deleted := map[string]bool{}
	for _, file := range f.sinkFiles() {
		if runOfFile(t, file) != r1.RunID {
			deleted[filepath.Base(file)] = true
		}
	}

	r := f.reset("--to-run", r1.RunID, "--purge-output")
	f.assertSink(monday)
	saysWhat := strings.Contains(r.output(), strconv.Itoa(len(deleted)))
	for name := range deleted {
		saysWhat = saysWhat || strings.Contains(r.output(), name)
	}
	for _, run := range later {
		saysWhat = saysWhat || strings.Contains(r.output(), run.RunID)
	}
	if !saysWhat {
		t.Errorf("reset --purge-output does not say what it deleted (%d files of %d runs)\n%v", len(deleted), len(later), r)
	}

	s := f.mustRun()
	assertFiles(t, "run after the rewind and purge", s, 3)
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()

	f.reset("--purge-output")
	f.assertSink(nil)
	s = f.mustRun()
	assertFiles(t, "run after the full reset and purge", s, 7)
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()
}
