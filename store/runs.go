package store

import (
	"context"
	"fmt"
	"iter"
)

// RunQuery bounds a Runs query. The zero RunQuery asks for every run.
type RunQuery struct {
	// Limit is the most runs returned; 0 means no limit.
	Limit int
	// BeforeSeq returns only runs with a Seq below it; 0 means from the
	// newest run.
	BeforeSeq int64
}

// RunPage is how many runs EachRun and AllRuns read per query.
const RunPage = 500

// EachRun yields the job's runs newest first, from below beforeSeq (0:
// from the newest), reading them in pages of page runs (RunPage if not
// positive) so that a caller that stops early reads little. A run begun
// after the first page was read is left out (it is newer than that page);
// none is yielded twice. A read error is yielded once, last. A read: retry
// freely.
func EachRun(ctx context.Context, st Store, job string, beforeSeq int64, page int) iter.Seq2[Run, error] {
	if page <= 0 {
		page = RunPage
	}
	return func(yield func(Run, error) bool) {
		q := RunQuery{Limit: page, BeforeSeq: beforeSeq}
		for {
			runs, err := st.Runs(ctx, job, q)
			if err != nil {
				yield(Run{}, fmt.Errorf("listing runs of job %q: %w", job, err))
				return
			}
			for _, r := range runs {
				if q.BeforeSeq > 0 && r.Seq >= q.BeforeSeq {
					yield(Run{}, fmt.Errorf("listing runs of job %q: the store returned run %s (seq %d) for runs before seq %d",
						job, r.RunID, r.Seq, q.BeforeSeq))
					return
				}
				if !yield(r, nil) {
					return
				}
			}
			if len(runs) < q.Limit || runs[len(runs)-1].Seq <= 1 {
				return
			}
			q.BeforeSeq = runs[len(runs)-1].Seq
		}
	}
}

// AllRuns returns every run of the job, newest first, read in bounded
// pages (EachRun). A read: retry freely.
func AllRuns(ctx context.Context, st Store, job string) ([]Run, error) {
	var all []Run
	for r, err := range EachRun(ctx, st, job, 0, RunPage) {
		if err != nil {
			return nil, err
		}
		all = append(all, r)
	}
	return all, nil
}
