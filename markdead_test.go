package tidemark

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// countingRuns counts the run records its store's Runs returns: on S3
// each is a request.
type countingRuns struct {
	store.Store
	records int
}

func (s *countingRuns) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	runs, err := s.Store.Runs(ctx, job, q)
	s.records += len(runs)
	return runs, err
}

// TestMarkDeadReadsOneRecord: after a succeeded run, the next run's look
// for runs that died reads that one run record, not a page of them, however
// many runs the job has had; a run that died after it is still found.
func TestMarkDeadReadsOneRecord(t *testing.T) {
	ctx := context.Background()
	st := &countingRuns{Store: memory.New(memory.Options{Name: t.Name()})}
	const job = "j"
	l, err := st.AcquireLease(ctx, job, store.Holder{ID: "test", Host: "test"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		h, err := st.Head(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		r, err := st.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: fmt.Sprintf("run-%02d", i), Host: "test"})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		if _, err := st.Commit(ctx, store.Commit{Job: job, Token: l.Token, BaseVersion: h.Version, Advance: true, Run: r}); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	if err := markDead(ctx, st, job, l.Token, log); err != nil {
		t.Fatal(err)
	}
	if st.records != 1 {
		t.Errorf("markDead after 30 succeeded runs read %d run records, want 1", st.records)
	}

	if _, err := st.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: "dead", Host: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := markDead(ctx, st, job, l.Token, log); err != nil {
		t.Fatal(err)
	}
	r, err := st.Run(ctx, job, "dead")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusFailed {
		t.Errorf("a run that died after the last succeeded one: status %s, want failed", r.Status)
	}
}
