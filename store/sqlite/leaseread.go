package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

var _ store.LeaseReader = (*Store)(nil)

// CurrentLease returns the job's live lease, if any (store.LeaseReader).
func (s *Store) CurrentLease(ctx context.Context, job string) (store.Lease, bool, error) {
	l, ok, err := lease(ctx, s.db, job)
	if err != nil {
		return store.Lease{}, false, fmt.Errorf("reading lease of job %q: %w", job, err)
	}
	if !ok || !l.Expires.After(time.Now()) {
		return store.Lease{}, false, nil
	}
	return l, true, nil
}
