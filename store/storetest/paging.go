package storetest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// beginN begins runs r1..rn of l's job.
func beginN(t *testing.T, s store.Store, l store.Lease, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		begin(t, s, l, fmt.Sprint("r", i), bookmark.ModeEnable)
	}
}

// wantRuns fails the test unless Runs(q) lists the ids want.
func wantRuns(t *testing.T, s store.Store, job string, q store.RunQuery, want ...string) []store.Run {
	t.Helper()
	runs, err := s.Runs(t.Context(), job, q)
	if err != nil {
		t.Fatalf("Runs(%+v): %v", q, err)
	}
	if got := runIDs(runs); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
		t.Errorf("Runs(%+v) = %v, want %v", q, got, want)
	}
	return runs
}

// testRunsPaging: Limit and BeforeSeq bound Runs, newest first; pages
// walked by the last Seq meet exactly, and a run begun between two pages
// is not in the later one.
func testRunsPaging(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r")
	wantRuns(t, s, job, store.RunQuery{Limit: 2})
	wantRuns(t, s, job, store.RunQuery{Limit: 2, BeforeSeq: 3})
	beginN(t, s, l, 5)
	lo := acquire(t, s, otherJob, "o")
	begin(t, s, lo, "x1", bookmark.ModeEnable)

	wantRuns(t, s, job, store.RunQuery{}, "r5", "r4", "r3", "r2", "r1")
	wantRuns(t, s, job, store.RunQuery{Limit: 2}, "r5", "r4")
	wantRuns(t, s, job, store.RunQuery{BeforeSeq: 4}, "r3", "r2", "r1")
	wantRuns(t, s, job, store.RunQuery{Limit: 2, BeforeSeq: 4}, "r3", "r2")
	wantRuns(t, s, job, store.RunQuery{Limit: 10, BeforeSeq: 3}, "r2", "r1")
	wantRuns(t, s, job, store.RunQuery{BeforeSeq: 1})
	wantRuns(t, s, job, store.RunQuery{BeforeSeq: 99}, "r5", "r4", "r3", "r2", "r1")
	wantRuns(t, s, job, store.RunQuery{Limit: 5}, "r5", "r4", "r3", "r2", "r1")
	wantRuns(t, s, "no-such-job", store.RunQuery{Limit: 3})

	// Pages of 2 over 5 runs, with a run begun between the first two.
	p1 := wantRuns(t, s, job, store.RunQuery{Limit: 2}, "r5", "r4")
	begin(t, s, l, "r6", bookmark.ModeEnable)
	p2 := wantRuns(t, s, job, store.RunQuery{Limit: 2, BeforeSeq: p1[1].Seq}, "r3", "r2")
	p3 := wantRuns(t, s, job, store.RunQuery{Limit: 2, BeforeSeq: p2[1].Seq}, "r1")
	wantRuns(t, s, job, store.RunQuery{Limit: 2, BeforeSeq: p3[0].Seq})
	// An exact boundary: 6 runs in pages of 3, the last one empty.
	q1 := wantRuns(t, s, job, store.RunQuery{Limit: 3}, "r6", "r5", "r4")
	q2 := wantRuns(t, s, job, store.RunQuery{Limit: 3, BeforeSeq: q1[2].Seq}, "r3", "r2", "r1")
	wantRuns(t, s, job, store.RunQuery{Limit: 3, BeforeSeq: q2[2].Seq})
}

// testEachRun: EachRun and AllRuns walk every run newest first in pages,
// at exact page boundaries too, and stop when the caller does.
func testEachRun(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	all, err := store.AllRuns(ctx, s, job)
	if err != nil || len(all) != 0 {
		t.Errorf("AllRuns of a new job = %v, %v; want none", runIDs(all), err)
	}
	beginN(t, s, l, 6)
	want := []string{"r6", "r5", "r4", "r3", "r2", "r1"}
	for _, page := range []int{1, 2, 3, 4, 6, 7, 0} {
		var got []string
		for r, err := range store.EachRun(ctx, s, job, 0, page) {
			if err != nil {
				t.Fatalf("EachRun(page %d): %v", page, err)
			}
			got = append(got, r.RunID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("EachRun(page %d) = %v, want %v", page, got, want)
		}
	}
	var got []string
	for r := range store.EachRun(ctx, s, job, 5, 2) {
		got = append(got, r.RunID)
		if len(got) == 3 {
			break
		}
	}
	if want := []string{"r4", "r3", "r2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("EachRun(before 5) stopped after 3 = %v, want %v", got, want)
	}
	all, err = store.AllRuns(ctx, s, job)
	if err != nil {
		t.Fatal(err)
	}
	if got := runIDs(all); !reflect.DeepEqual(got, want) {
		t.Errorf("AllRuns = %v, want %v", got, want)
	}
}
