package memory

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Versions returns the job's bookmark versions newest first, bounded by q.
func (s *Store) Versions(_ context.Context, job string, q store.VersionQuery) ([]store.Version, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok {
		return nil, nil
	}
	var vs []store.Version
	for i := len(j.versions) - 1; i >= 0; i-- {
		v := j.versions[i]
		if q.Before > 0 && v.head.Version >= q.Before {
			continue
		}
		if q.Limit > 0 && len(vs) == q.Limit {
			break
		}
		vs = append(vs, store.Version{Version: v.head.Version, Kind: v.kind, RunID: v.head.RunID,
			At: v.head.UpdatedAt, By: v.by})
	}
	return vs, nil
}

// SourceStatesAt returns the source states of one bookmark version.
func (s *Store) SourceStatesAt(_ context.Context, job string, version int64) (map[string]bookmark.SourceState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok || version < 1 || version > int64(len(j.versions)) {
		return nil, fmt.Errorf("reading source states of job %q at version %d: %w", job, version, store.ErrNotFound)
	}
	states, err := decodeStates(j.versions[version-1].states)
	if err != nil {
		return nil, fmt.Errorf("reading source states of job %q at version %d: %w", job, version, err)
	}
	return states, nil
}
