package memory

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/tidemark-etl/tidemark/store"
)

// Outputs returns a run's outputs ordered by sink, then Final (byte order).
func (s *Store) Outputs(_ context.Context, job, runID string) ([]store.Output, error) {
	s.mu.Lock()
	var outs []store.Output
	if rec, err := s.run(job, runID); err == nil {
		outs = cloneOutputs(rec.outputs)
	}
	s.mu.Unlock()
	slices.SortFunc(outs, func(a, b store.Output) int {
		return cmp.Or(cmp.Compare(a.Sink, b.Sink), cmp.Compare(a.Final, b.Final))
	})
	return outs, nil
}

// Actions returns a run's publish actions in the order they were committed.
func (s *Store) Actions(_ context.Context, job, runID string) ([]store.SinkAction, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var acts []store.SinkAction
	if rec, err := s.run(job, runID); err == nil {
		for _, a := range rec.actions {
			acts = append(acts, cloneAction(a))
		}
	}
	return acts, nil
}

// Unpublished returns the succeeded, not undone runs, oldest first, that
// have at least one output not yet published.
func (s *Store) Unpublished(_ context.Context, job string) ([]store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok {
		return nil, nil
	}
	var runs []store.Run
	for _, rec := range j.runs {
		if store.RollsForward(rec.run, rec.outputs) {
			runs = append(runs, cloneRun(rec.run))
		}
	}
	return runs, nil
}

// MarkPublished marks all of a run's outputs published. Idempotent;
// store.ErrNotFound for an unknown run. token must be the job's current
// lease token.
func (s *Store) MarkPublished(_ context.Context, job string, token int64, runID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.fenced(job, token, runID)
	if err != nil {
		return fmt.Errorf("marking outputs of run %s of job %q published: %w", runID, job, err)
	}
	for i := range rec.outputs {
		rec.outputs[i].Published = true
	}
	return nil
}

// PublishedOutputs yields the published outputs at root of the job's
// succeeded, not purged runs, from a snapshot taken when iteration starts.
func (s *Store) PublishedOutputs(_ context.Context, job, root string) iter.Seq2[store.Output, error] {
	return func(yield func(store.Output, error) bool) {
		s.mu.Lock()
		var outs []store.Output
		if j, ok := s.jobs[job]; ok {
			for _, rec := range j.runs {
				for _, o := range rec.outputs {
					if store.PublishedAt(rec.run, o, root) {
						outs = append(outs, cloneOutput(o))
					}
				}
			}
		}
		s.mu.Unlock()
		for _, o := range outs {
			if !yield(o, nil) {
				return
			}
		}
	}
}
