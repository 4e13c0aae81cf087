// Package par runs jobs in parallel, a bounded number at a time.
package par

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// Do runs jobs, n at a time, and returns the first error (the others are
// cancelled through their context).
func Do(ctx context.Context, n int, jobs []func(context.Context) error) error {
	if n < 1 {
		n = 1
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	var failed atomic.Bool
	for _, job := range jobs {
		if failed.Load() {
			break
		}
		g.Go(func() error {
			if err := job(ctx); err != nil {
				failed.Store(true)
				return err
			}
			return nil
		})
	}
	return g.Wait()
}
