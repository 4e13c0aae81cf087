package tidemark

import (
	"context"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Observer is told when a run begins and ends (the CLI sends OpenLineage
// events from it). Its methods are called on the run's goroutine: they
// must return at once (an observer that does I/O queues it) and cannot
// fail the run.
type Observer interface {
	// RunStarted is called once, when the run is recorded.
	RunStarted(ctx context.Context, ev RunEvent)
	// RunFinished is called once after RunStarted, when the run's outcome
	// is known (Err nil: succeeded).
	RunFinished(ctx context.Context, ev RunEvent)
}

// RunEvent is what an Observer is told.
type RunEvent struct {
	// Result is the run's summary: at the start with status running and
	// no counts, at the end as Run returns it.
	Result Result
	// BaseVersion is the bookmark version the run began from.
	BaseVersion int64
	// Err is the run's error (RunFinished only; nil: succeeded).
	Err error
	// Schemas are the schemas the run read each source ctx with
	// (RunFinished only; a ctx the run did not read is absent).
	Schemas map[string][]bookmark.Column
}

// observeStart tells the observer, if any, that the run began.
func (r *runner) observeStart(ctx context.Context) {
	if r.opts.Observer == nil {
		return
	}
	head, err := r.st.Head(ctx, r.job)
	if err == nil {
		r.baseVersion = head.Version
	}
	r.opts.Observer.RunStarted(ctx, RunEvent{Result: ResultOf(r.rec), BaseVersion: r.baseVersion})
}

// observeEnd tells the observer, if any, how the run ended.
func (r *runner) observeEnd(ctx context.Context, res Result, err error) {
	if r.opts.Observer == nil {
		return
	}
	r.opts.Observer.RunFinished(context.WithoutCancel(ctx),
		RunEvent{Result: res, BaseVersion: r.baseVersion, Err: err, Schemas: r.schemas})
}
