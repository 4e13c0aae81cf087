package e2e

import (
	"syscall"
	"testing"
)

// TestFaultAtEachStep kills a run (TIDEMARK_FAULT=<step>, SIGKILL) at every
// step of the commit protocol, then reruns the job: after the rerun every
// record is in the sink exactly once and no staged file is left under the
// sink's _tidemark/. A kill before the state commit leaves the input
// unread (the rerun reads it); a kill after it leaves a committed run that
// the rerun rolls forward (the rerun has nothing new to read).
func TestFaultAtEachStep(t *testing.T) {
	t.Parallel()
	eachBackend(t, testFaultAtEachStep)
}

func testFaultAtEachStep(t *testing.T, be backend) {
	for _, tc := range []struct {
		step      string
		committed bool // the state commit happened before the kill
	}{
		{"after-plan", false},
		{"after-stage", false},
		{"after-commit", true},
		{"mid-publish", true},
		{"after-publish", true},
	} {
		t.Run(tc.step, func(t *testing.T) {
			t.Parallel()
			f := newFixtureOn(t, be, jobOpts{})
			monday := f.addCSVs("monday", 3, 30)
			f.mustRun()
			before := f.bookmark()
			// Five products: the killed run stages several files, so that
			// mid-publish has published some and not others.
			tuesday := f.addCSVs("tuesday", 3, 30)

			_, r := f.run([]string{"TIDEMARK_FAULT=" + tc.step})
			if r.signal != syscall.SIGKILL {
				t.Fatalf("run with TIDEMARK_FAULT=%s: want it killed by SIGKILL at that step\n%v", tc.step, r)
			}

			// What a reader sees between the kill and the next command.
			published := f.readSink()
			switch tc.step {
			case "after-plan", "after-stage", "after-commit":
				assertRecords(t, "sink after the kill", published, monday)
			case "mid-publish":
				if n := len(published); n <= len(monday) || n >= len(monday)+len(tuesday) {
					t.Errorf("sink after a kill mid-publish: %d rows, want some but not all of the run's %d published (plus %d earlier)",
						n, len(tuesday), len(monday))
				}
			case "after-publish":
				assertRecords(t, "sink after the kill", published, concat(monday, tuesday))
			}
			if tc.step == "after-stage" && len(f.stagedFiles()) == 0 && len(f.preparedUploads()) == 0 {
				t.Errorf("after a kill at after-stage: no staged files under %s_tidemark/ and no upload left to complete, want the staged output there", f.out.loc())
			}

			s := f.mustRun()
			if tc.committed {
				assertFiles(t, "rerun after a kill past the commit", s, 0)
			} else {
				assertFiles(t, "rerun after a kill before the commit", s, 3)
				if after := f.bookmark(); after.RunID == before.RunID {
					t.Errorf("bookmark after the rerun still names run %s", before.RunID)
				}
			}
			f.assertSink(concat(monday, tuesday))
			f.assertNoDuplicates()
			if left := f.stagedFiles(); len(left) > 0 {
				t.Errorf("after the rerun, %d staged files are left under _tidemark: %v", len(left), firstFew(left))
			}
			assertFiles(t, "the run after the rerun", f.mustRun(), 0)
			f.assertSink(concat(monday, tuesday))
		})
	}
}

// TestFaultTwiceInARow kills two runs in a row (before and after the
// commit) and then reruns: still exactly once.
func TestFaultTwiceInARow(t *testing.T) {
	t.Parallel()
	eachBackend(t, testFaultTwiceInARow)
}

func testFaultTwiceInARow(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	monday := f.addCSVs("monday", 3, 30)
	for _, step := range []string{"after-stage", "mid-publish"} {
		if _, r := f.run([]string{"TIDEMARK_FAULT=" + step}); r.signal != syscall.SIGKILL {
			t.Fatalf("run with TIDEMARK_FAULT=%s: want it killed by SIGKILL\n%v", step, r)
		}
	}
	tuesday := f.addCSVs("tuesday", 2, 30)
	if _, r := f.run([]string{"TIDEMARK_FAULT=after-plan"}); r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=after-plan: want it killed by SIGKILL\n%v", r)
	}
	s := f.mustRun()
	assertFiles(t, "rerun", s, 2)
	f.assertSink(concat(monday, tuesday))
	if left := f.stagedFiles(); len(left) > 0 {
		t.Errorf("after the rerun, %d staged files are left under _tidemark: %v", len(left), firstFew(left))
	}
}
