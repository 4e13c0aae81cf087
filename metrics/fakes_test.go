package metrics_test

import (
	"context"
	"errors"

	"github.com/tidemark-etl/tidemark/store"
)

// beforeFailure shows only the runs before seq.
type beforeFailure struct {
	store.Store
	seq int64
}

func (b *beforeFailure) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	if q.BeforeSeq == 0 || q.BeforeSeq > b.seq {
		q.BeforeSeq = b.seq
	}
	return b.Store.Runs(ctx, job, q)
}

func (b *beforeFailure) Jobs(ctx context.Context) ([]string, error) {
	return b.Store.(store.JobLister).Jobs(ctx)
}

// broken fails every read of a job.
type broken struct{ store.Store }

func (b *broken) Jobs(context.Context) ([]string, error) { return []string{"mjob"}, nil }
func (b *broken) Head(context.Context, string) (store.Head, error) {
	return store.Head{}, errors.New("database is locked")
}
