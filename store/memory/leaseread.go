package memory

import (
	"context"

	"github.com/tidemark-etl/tidemark/store"
)

var _ store.LeaseReader = (*Store)(nil)

// CurrentLease returns the job's live lease on the store's clock, if any
// (store.LeaseReader).
func (s *Store) CurrentLease(_ context.Context, job string) (store.Lease, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok || j.lease == nil || !j.lease.Expires.After(s.clock()) {
		return store.Lease{}, false, nil
	}
	return *j.lease, true, nil
}
