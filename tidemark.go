// Package tidemark is incremental ETL with job bookmarks: the library behind
// the tidemark command. Run executes a whole job, Plan says what its next
// run would read, Reset clears or rewinds its bookmark; Bookmarks gives a Go
// program the bookmark alone. Run runs a job as the CLI does: its crawler,
// its run, its lineage events. The work is done by runner/ through the
// source, sink, engine and store contracts; package all links in the
// implementations that ship with tidemark, and this package imports it.
package tidemark

import (
	"context"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/runner"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"

	// The implementations built into tidemark: each registers itself.
	_ "github.com/tidemark-etl/tidemark/all"
)

// Options, results and progress of a run (see package runner).
type (
	RunOptions     = runner.RunOptions
	Result         = runner.Result
	Progress       = runner.Progress
	EngineProgress = runner.EngineProgress
	PlanResult     = runner.PlanResult
	SourcePreview  = runner.SourcePreview
	ResetOptions   = runner.ResetOptions
	ResetResult    = runner.ResetResult
	Bookmarks      = runner.Bookmarks
	Observer       = runner.Observer
	RunEvent       = runner.RunEvent
)

// Errors a caller tells apart.
type (
	// SourceChangedError: a source's definition changed under its ctx.
	SourceChangedError = source.ChangedError
	// SinkOwnedError: a sink location belongs to another job or state.
	SinkOwnedError = sink.OwnedError
	// UnpublishedError: a run committed but its output is not all published.
	UnpublishedError = runner.UnpublishedError
	// StateError: a state store that could not be opened.
	StateError = runner.StateError
	// MissingSourceError: a file source's folder does not exist.
	MissingSourceError = files.MissingSourceError
)

// ErrUsage marks errors in how tidemark was called (exit code 2).
var ErrUsage = runner.ErrUsage

// DefaultLeaseTTL is how long a lease lives without renewal.
const DefaultLeaseTTL = runner.DefaultLeaseTTL

// LeaseHolderGone reports whether a lease holder was a process of this
// machine that is gone (see runner.HolderGone).
func LeaseHolderGone(h store.Holder, hostID string) bool { return runner.HolderGone(h, hostID) }

// Plan says what the next run would read; it changes nothing.
func Plan(ctx context.Context, spec *job.Spec, opts RunOptions) (*PlanResult, error) {
	return runner.Plan(ctx, spec, opts)
}

// Reset clears or rewinds a job's bookmark under its lease, and with Purge
// deletes the output of every run after the target.
func Reset(ctx context.Context, st store.Store, jobName string, opts ResetOptions) (*ResetResult, error) {
	return runner.Reset(ctx, st, jobName, opts)
}

// OpenBookmarks opens the state store at location and takes the job's
// lease (see runner.OpenBookmarks).
func OpenBookmarks(ctx context.Context, location, jobName string) (*Bookmarks, error) {
	return runner.OpenBookmarks(ctx, location, jobName)
}

// ResultOf converts a stored run record.
func ResultOf(r store.Run) Result { return runner.ResultOf(r) }

// StateLocation picks the state store location (see runner.StateLocation).
func StateLocation(flag string, spec *job.Spec) string { return runner.StateLocation(flag, spec) }

// StateOrigin is StateLocation and why that location was chosen.
func StateOrigin(flag string, spec *job.Spec) (location, origin string) {
	return runner.StateOrigin(flag, spec)
}

// OpenState opens the state store at location.
func OpenState(ctx context.Context, location string) (store.Store, error) {
	return runner.OpenState(ctx, location)
}

// OpenExistingState opens an existing state store for a command about
// existing state (see runner.OpenExistingState).
func OpenExistingState(ctx context.Context, flag string, spec *job.Spec, readOnly bool) (store.Store, error) {
	return runner.OpenExistingState(ctx, flag, spec, readOnly)
}

// ExitCode maps an error of Run, Plan, Reset or a Session to the
// contract's exit codes (0 ok, 1 failed, 2 usage or job file, 3 lease held).
func ExitCode(err error) int { return runner.ExitCode(err) }
