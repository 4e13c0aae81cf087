package objcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/tidemark-etl/tidemark/store"
)

// Outputs returns a run's outputs ordered by sink, then Final (none for an
// unknown run).
func (s *Store) Outputs(ctx context.Context, job, runID string) ([]store.Output, error) {
	r, err := s.runForRead(ctx, job, runID)
	if err != nil {
		return nil, fmt.Errorf("reading outputs of run %s of job %q in %s: %w", runID, job, s.root, err)
	}
	outs := r.Outputs
	slices.SortFunc(outs, func(a, b store.Output) int {
		return cmp.Or(cmp.Compare(a.Sink, b.Sink), cmp.Compare(a.Final, b.Final))
	})
	return outs, nil
}

// Actions returns a run's publish actions in commit order (none for an
// unknown run).
func (s *Store) Actions(ctx context.Context, job, runID string) ([]store.SinkAction, error) {
	r, err := s.runForRead(ctx, job, runID)
	if err != nil {
		return nil, fmt.Errorf("reading actions of run %s of job %q in %s: %w", runID, job, s.root, err)
	}
	return r.Actions, nil
}

// runForRead reads a run record with the head's pending changes; an
// unknown run is an empty record.
func (s *Store) runForRead(ctx context.Context, job, runID string) (runObj, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return runObj{}, err
	}
	r, _, err := s.readRun(ctx, job, runID, &h)
	if errors.Is(err, store.ErrNotFound) {
		return runObj{}, nil
	}
	return r, err
}

// Unpublished returns the committed, not undone runs, oldest first, with
// an output not yet published: the head lists the candidates, their
// records tell.
func (s *Store) Unpublished(ctx context.Context, job string) ([]store.Run, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("listing unpublished runs of job %q in %s: %w", job, s.root, err)
	}
	var runs []store.Run
	for _, id := range h.Unpublished {
		r, _, err := s.readRun(ctx, job, id, &h)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing unpublished runs of job %q in %s: %w", job, s.root, err)
		}
		if store.RollsForward(r.Run, r.Outputs) {
			runs = append(runs, r.Run)
		}
	}
	slices.SortFunc(runs, func(a, b store.Run) int { return cmp.Compare(a.Seq, b.Seq) })
	return runs, nil
}

// MarkPublished marks all of a run's outputs published, under the job's
// lease: the record is replaced, then the head drops the run from its
// unpublished list (a crash between leaves it listed; Unpublished reads
// the record). Idempotent.
func (s *Store) MarkPublished(ctx context.Context, job string, token int64, runID string) error {
	err := s.fencedRunChange(ctx, job, token, runID, func(r *runObj) {
		for i := range r.Outputs {
			r.Outputs[i].Published = true
		}
	})
	if err == nil {
		_, err = s.updateHead(ctx, job, func(h *headObj) error {
			if err := h.checkToken(token); err != nil {
				return err
			}
			if !slices.Contains(h.Unpublished, runID) {
				return errNoChange
			}
			h.Unpublished = slices.DeleteFunc(h.Unpublished, func(id string) bool { return id == runID })
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("marking outputs of run %s of job %q published in %s: %w", runID, job, s.root, err)
	}
	return nil
}

// PublishedOutputs yields the published outputs at root of the job's
// succeeded, not purged runs. It reads every run record of the job (the
// run index, then the records, 16 at a time, a page at a time): a cost
// that grows with the runs, paid by overwrite sinks only.
func (s *Store) PublishedOutputs(ctx context.Context, job, root string) iter.Seq2[store.Output, error] {
	return func(yield func(store.Output, error) bool) {
		q := store.RunQuery{Limit: store.RunPage}
		for {
			recs, err := s.runRecords(ctx, job, q)
			if err != nil {
				yield(store.Output{}, fmt.Errorf("reading published outputs of job %q in %s: %w", job, s.root, err))
				return
			}
			for _, rec := range recs {
				for _, o := range rec.Outputs {
					if store.PublishedAt(rec.Run, o, root) && !yield(o, nil) {
						return
					}
				}
			}
			if len(recs) < q.Limit || recs[len(recs)-1].Run.Seq <= 1 {
				return
			}
			q.BeforeSeq = recs[len(recs)-1].Run.Seq
		}
	}
}
