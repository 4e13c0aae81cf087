// Package sink defines what a job's sink does for the runner. A run's
// output goes through four steps, each a method of a contract:
//
//   - Stage (before the state commit): the engine's output is made
//     durable where publishing finds it, and nothing of it is visible in
//     the sink; the outputs are recorded in the commit's manifest.
//   - Publish (after the commit): the run's output becomes visible under
//     deterministic names. Idempotent: a roll-forward after a crash
//     anywhere in it calls it again.
//   - Purge: a reset --purge-output deletes what a run published.
//   - Cleanup: what runs that never committed left is deleted.
//
// Sink is a sink opened from the job file (Claim, Cleanup, Prepare and
// Stage); Location is a place opened from manifest records alone (Publish
// and Purge), so a roll-forward or a reset needs no job file. Kinds:
// sink/files (local folders and S3 prefixes, with S3's "upload to the
// final key, complete on publish") and sink/sqltable (SQL tables); a
// catalog table or an Iceberg table will be one more. The runner never
// asks which kind it holds.
package sink

import (
	"context"
	"iter"
	"log/slog"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/store"
)

// Sink is one opened sink of a job.
type Sink interface {
	// Ctx is the sink's id in the job file.
	Ctx() string
	// Claim makes sure the sink's location is the job's to write under
	// this state store before the run touches it: a *OwnedError when it is
	// not (nothing was written or deleted then). It writes nothing but an
	// ownership record and may be called again.
	Claim(ctx context.Context, c Claim) error
	// Cleanup deletes what the job's runs that never committed left in the
	// sink (staged files, incomplete uploads, staging tables); dead says
	// whether a run id found there is one of those. Anything of another
	// run, or not tidemark's, is left alone. Called under the job's lease
	// once every committed run is published. Idempotent.
	Cleanup(ctx context.Context, dead func(runID string) (bool, error), log *slog.Logger) error
	// Prepare readies the sink's staging area for one execution of the
	// run. The caller calls the Staging's Discard if the execution or the
	// run fails before the commit.
	Prepare(ctx context.Context, run Run) (Staging, error)
	Close() error
}

// Run is the run a staging area is for.
type Run struct {
	ID string
	// TempDir makes a temporary folder that is deleted when the run ends
	// (and by the next run if this one dies).
	TempDir func(pattern string) (string, error)
	// Concurrency bounds parallel uploads (io.concurrency).
	Concurrency int
	// Engine is what the engine that writes the staging area can do.
	Engine   engine.Caps
	Progress Progress
	Log      *slog.Logger
	// Catalog is the state store's catalog, for a sink that registers its
	// table (it reads the table's current version to write the next).
	Catalog catalog.Reader
}

// Progress receives upload progress (nil: none).
type Progress interface {
	Phase(name string, files, bytes int64)
	Add(files, bytes int64)
	Done()
}

// Claim is who claims a sink: the job, its state store and the version
// of its bookmark, and how.
type Claim struct {
	Job      string
	Identity store.Identity
	Version  int64
	Mode     bookmark.Mode
	// Adopt takes the location over whatever its record says.
	Adopt bool
	// RunID is the run that claims (recorded in the state store once the
	// claim succeeded); "" for a reset's checks.
	RunID string
	// Known reports whether the state store has a record of a run.
	Known func(ctx context.Context, runID string) (bool, error)
	// CheckOnly makes Claim check and write nothing: a run checks every
	// sink so before it claims any, so that a sink that refuses it leaves
	// no other's record naming a run that is never recorded.
	CheckOnly bool
	Log       *slog.Logger
}

// Staging is a sink's staging area for one execution.
type Staging interface {
	// Target is where and how the engine writes the sink's rows.
	Target() engine.Sink
	// Rejects is a location the engine may write quarantined rows to, if
	// the sink can keep them ("" if not).
	Rejects() string
	// EngineStarted is called just before the engine runs, EngineReturned
	// once it returned (err: it failed): a sink may send output while it
	// is written.
	EngineStarted(ctx context.Context)
	EngineReturned(ctx context.Context, err error)
	// Stage makes the engine's output (res) durable where Publish finds
	// it, and, with rejects, the quarantined rows the engine wrote to
	// Rejects; nothing becomes visible in the sink. It returns what the
	// commit records. On error the caller calls Discard.
	Stage(ctx context.Context, res engine.SinkResult, rejects bool) (Staged, error)
	// Discard deletes what the staging area holds. Idempotent; failures
	// are logged (the next run's Cleanup deletes what is left).
	Discard(ctx context.Context)
}

// Staged is what the commit records of one sink.
type Staged struct {
	Outputs []store.Output
	Actions []store.SinkAction
	Count   store.Count
	// Catalog is the catalog changes the run's commit applies for the
	// sink (its table made or given new columns, the partitions it wrote,
	// those an overwrite empties): applied in the same transaction as the
	// run's commit, so the catalog is in step with the published files.
	Catalog catalog.Changes
}

// Location is one place outputs were published to, opened from its
// manifest records.
type Location interface {
	// Publish makes the run's staged outputs here visible under their
	// final names and applies its actions (overwrites). Idempotent: after
	// a crash anywhere in it, calling it again finishes the work. An
	// output that can no longer be published (its staged file or upload
	// is gone) is an error wrapping ErrOutputLost.
	Publish(ctx context.Context, p Publication) error
	// Published is called once the run is marked published: what is left
	// of its staging here is deleted (failures are logged).
	Published(ctx context.Context, runID string, log *slog.Logger)
	// Purge deletes what the run's outputs here published. Idempotent:
	// what is already gone is reported in Gone.
	Purge(ctx context.Context, job, runID string, outs []store.Output, log *slog.Logger) (Purged, error)
	Close() error
}

// PurgeChecker is a Location that keeps an ownership record. CheckPurge
// returns a *OwnedError (Purge set) when a reset of c.Job in the state
// store c.Identity may not delete what the job published there: the
// record names another job, or another state store whose history c's does
// not hold (it knows neither the record's last run nor its version). A
// read; a reset calls it for every location before it changes anything.
type PurgeChecker interface {
	CheckPurge(ctx context.Context, c Claim) error
	// TakeForPurge makes the location this job's under c.Identity at
	// c.Version (the version the reset commits) before anything there is
	// deleted, after the same checks as CheckPurge, in one conditional
	// write: a claim of another store that races it either comes first
	// and refuses the purge (a *OwnedError, Purge set), or comes after
	// and is refused itself, the record naming a version that store's
	// state does not have. Idempotent.
	TakeForPurge(ctx context.Context, c Claim) error
}

// Publication is one run's publishing at one location.
type Publication struct {
	Job, RunID string
	Run        store.Run
	Outputs    []store.Output
	Actions    []store.SinkAction
	State      StateReader
	Log        *slog.Logger
}

// StateReader is the part of the state store publishing reads.
type StateReader interface {
	Identity(ctx context.Context) (store.Identity, error)
	Run(ctx context.Context, job, runID string) (store.Run, error)
	Outputs(ctx context.Context, job, runID string) ([]store.Output, error)
	PublishedOutputs(ctx context.Context, job, root string) iter.Seq2[store.Output, error]
}

// Purged is what a purge deleted: descriptions of what it removed, and
// the outputs that were not where they had been published.
type Purged struct {
	Deleted []string
	Gone    []string
	// Emptied are the folders the purge left without a file, named as the
	// sink names its partitions' locations in the catalog: a reset drops
	// the catalog partitions at these locations.
	Emptied []string
}
