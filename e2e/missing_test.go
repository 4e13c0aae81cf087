package e2e

import (
	"testing"
	"time"
)

// TestFileDeletedAfterPlan: a file deleted between planning and reading
// (the run paused after planning with TIDEMARK_FAULT=after-plan:sleep=...)
// does not fail the run: the run reads the rest, reports the file as
// missing and does not record it, so that when it comes back the next run
// reads it.
func TestFileDeletedAfterPlan(t *testing.T) {
	t.Parallel()
	eachBackend(t, testFileDeletedAfterPlan)
}

func testFileDeletedAfterPlan(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	kept := f.addCSVs("kept", 3, 20)
	gone := f.addCSV("gone.csv", 20)
	goneData := f.in.get(t, "gone.csv")

	p := f.start([]string{"TIDEMARK_FAULT=after-plan:sleep=2s"}, "run", f.jobPath, "--json")
	p.waitFor(t, "planned", time.Minute)
	f.remove("gone.csv")
	r := p.wait(t)
	if r.code != 0 {
		t.Fatalf("run that lost a planned file: got exit %d, want 0\n%v", r.code, r)
	}
	s := decodeOne[runSummary](t, r)
	if s.Status != "succeeded" {
		t.Errorf("run --json: status = %q, want succeeded", s.Status)
	}
	assertFiles(t, "the run that lost a file", s, 3)
	if got := s.source().Missing; got != 1 {
		t.Errorf("run --json: sources.orders_source.missing = %d, want 1\n%s", got, r.stdout)
	}
	assertMentions(t, r, "gone.csv")
	f.assertSink(kept)

	assertFiles(t, "run while the file is away", f.mustRun(), 0)

	// It comes back (the same bytes): it was never recorded, so it is read.
	f.put("gone.csv", goneData)
	if got := f.planFiles(); got != 1 {
		t.Errorf("plan after the file came back: files = %d, want 1", got)
	}
	s = f.mustRun()
	assertFiles(t, "run after the file came back", s, 1)
	assertRecords(t, "the run after the file came back", f.sinkRun(s.RunID), gone)
	f.assertSink(concat(kept, gone))
	assertFiles(t, "next run", f.mustRun(), 0)
}
