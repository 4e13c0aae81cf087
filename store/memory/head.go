package memory

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Head returns the job's newest bookmark version; Version 0 if it has none.
func (s *Store) Head(_ context.Context, job string) (store.Head, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[job]; ok {
		return j.head(job), nil
	}
	return store.Head{Job: job}, nil
}

// SourceStates returns the source states of the job's head version (an
// empty map if it has none).
func (s *Store) SourceStates(_ context.Context, job string) (map[string]bookmark.SourceState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok || len(j.versions) == 0 {
		return map[string]bookmark.SourceState{}, nil
	}
	states, err := decodeStates(j.versions[len(j.versions)-1].states)
	if err != nil {
		return nil, fmt.Errorf("reading source states of job %q: %w", job, err)
	}
	return states, nil
}
