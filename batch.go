package tidemark

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// A run whose sources have more new files than the job's batch_files reads
// them in batches: each batch is executed, staged, committed and published
// before the next begins, under the one lease the run holds. Each batch is
// a run record of its own (the first keeps the run's id, the k-th is
// "<id>-b<k>") and, in enable mode, a bookmark version of its own, so a
// crash late in a large backfill keeps the batches committed before it:
// the next run reads only what is left. `tidemark runs` shows each batch
// as the run it is; `run --json` sums them and lists them under
// "batches". The engine is never handed the whole backlog at once: DuckDB
// reads a list of many files more slowly than in proportion, and holds
// memory for each.
//
// A run is read in batches only when every sink appends (an overwrite
// would have each batch replace the one before) and every plan can be
// split (source.Splitter); otherwise it is one batch, as it always was.

// BatchResult is one batch of a run read in batches, in run --json.
type BatchResult struct {
	RunID   string `json:"run_id"`
	Status  string `json:"status"`
	Version int64  `json:"version"`
	// Files and Rows are what the batch read, over its sources.
	Files int64  `json:"files"`
	Rows  int64  `json:"rows"`
	Error string `json:"error,omitempty"`
}

// batchSize is how many files of each source one batch reads: 0 reads the
// run in one batch.
func (r *runner) batchSize() int {
	if r.spec.BatchFiles == nil || *r.spec.BatchFiles <= 0 {
		return 0
	}
	n := *r.spec.BatchFiles
	over := false
	for _, p := range r.plans {
		if _, ok := p.(source.Splitter); !ok {
			return 0
		}
		over = over || p.Pending() > int64(n)
	}
	if !over {
		return 0
	}
	for _, k := range r.sinks {
		if a, ok := k.(sink.Appender); !ok || !a.Appends() {
			r.log.Info("reading the run in one batch: a sink replaces what it holds", "sink", k.Ctx(), "batch_files", n)
			return 0
		}
	}
	return n
}

// split cuts the next batch of at most n files of each plan off plans;
// more reports that a later batch has files to read.
func split(plans []source.Plan, n int) (batch, rest []source.Plan, more bool) {
	for _, p := range plans {
		head, tail := p.(source.Splitter).Split(n)
		batch, rest = append(batch, head), append(rest, tail)
		more = more || tail.Pending() > 0
	}
	return batch, rest, more
}

// beginBatch records the run's k-th batch (k ≥ 2) as a run of its own,
// begun now under the run's lease, and makes it the current record.
func (r *runner) beginBatch(ctx context.Context, k int) error {
	rec := r.first
	rec.RunID = fmt.Sprintf("%s-b%04d", r.first.RunID, k)
	rec.Seq, rec.Attempt, rec.Version = 0, 0, 0
	rec.Status, rec.StartedAt, rec.FinishedAt, rec.Error = store.StatusRunning, time.Now().UTC(), time.Time{}, ""
	rec.Sources, rec.Sinks = map[string]store.Count{}, map[string]store.Count{}
	begun, err := r.st.BeginRun(ctx, r.lease.token(), rec)
	if err != nil {
		return fmt.Errorf("recording batch %d of run %s: %w", k, r.first.RunID, err)
	}
	r.rec = begun
	r.rec.Sources, r.rec.Sinks = map[string]store.Count{}, map[string]store.Count{}
	return nil
}

// result is the run's summary: its one record's, or, for a run read in
// batches, the first batch's with the counts of every batch summed, the
// version the last committed and each batch listed (the one that failed
// too).
func (r *runner) result() Result {
	if len(r.batches) == 0 {
		return ResultOf(r.rec)
	}
	recs := r.batches
	if r.rec.RunID != recs[len(recs)-1].RunID {
		recs = append(recs, r.rec) // the batch in progress, which failed
	}
	res := ResultOf(r.first)
	res.Sources, res.Sinks = map[string]store.Count{}, map[string]store.Count{}
	for _, b := range recs {
		br := BatchResult{RunID: b.RunID, Status: b.Status, Version: b.Version, Error: b.Error}
		for name, c := range b.Sources {
			res.Sources[name] = res.Sources[name].Add(c)
			br.Files += c.Files
			br.Rows += c.Rows
		}
		for name, c := range b.Sinks {
			res.Sinks[name] = res.Sinks[name].Add(c)
		}
		if b.Status == store.StatusSucceeded {
			res.Version = b.Version
		}
		if !b.FinishedAt.IsZero() {
			f := b.FinishedAt
			res.FinishedAt = &f
		}
		res.Status = b.Status
		res.Batches = append(res.Batches, br)
	}
	return res
}
