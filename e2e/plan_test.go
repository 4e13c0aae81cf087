package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestPlanShowsWhatRunReads: `plan --json` lists the files the next run
// reads (here a bounded subset, oldest first), changes nothing (asked twice,
// it answers the same, and the bookmark does not move), and the run then
// reads exactly those files.
func TestPlanShowsWhatRunReads(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPlanShowsWhatRunReads)
}

func testPlanShowsWhatRunReads(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{sourceExtra: []string{"bounded_files: 3"}})
	// Seven files whose age order is not their name order.
	base := time.Now().Add(-time.Hour)
	recsOf := map[string][]record{}
	for i, n := range []int{4, 0, 6, 2, 5, 1, 3} {
		name := fmt.Sprintf("f-%d.csv", n)
		recsOf[name] = f.addCSV(name, 10)
		f.setMtime(name, base.Add(time.Duration(i)*time.Minute))
	}
	wantOrder := [][]string{{"f-4.csv", "f-0.csv", "f-6.csv"}, {"f-2.csv", "f-5.csv", "f-1.csv"}, {"f-3.csv"}, {}}

	var all []record
	for i, want := range wantOrder {
		before := f.bookmarkOrEmpty("sales") // no state before the first run
		p := f.plan()
		if again := f.plan(); !slices.Equal(again.New, p.New) {
			t.Errorf("round %d: plan changed between two asks: %v, then %v", i+1, p.New, again.New)
		}
		if after := f.bookmarkOrEmpty("sales"); string(after.Version) != string(before.Version) || !sameSources(before, after) {
			t.Errorf("round %d: plan moved the bookmark: version %s -> %s", i+1, before.Version, after.Version)
		}
		got := slices.Sorted(slices.Values(p.New))
		if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("round %d: plan --json new = %v, want the oldest unread %v", i+1, p.New, want)
		}
		if *p.Files != int64(len(p.New)) {
			t.Errorf("round %d: plan --json files = %d but lists %d new files", i+1, *p.Files, len(p.New))
		}

		s := f.mustRun()
		assertFiles(t, fmt.Sprintf("round %d run", i+1), s, int64(len(p.New)))
		var planned []record
		for _, name := range p.New {
			planned = append(planned, recsOf[name]...)
		}
		assertRecords(t, fmt.Sprintf("round %d: the run's output vs the plan's files", i+1), f.sinkRun(s.RunID), planned)
		all = append(all, planned...)
	}
	f.assertSink(all)
}
