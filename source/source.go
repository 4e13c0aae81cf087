// Package source defines what a job's source does for the runner: it plans
// one run against its bookmark state (files by listing and diff, or a key
// range), readies the planned input for the engine as locations the engine
// can read, and says what the run commits for it afterwards. Kinds:
// source/files (local folders, S3 prefixes) and source/sqltable (SQL
// tables); a catalog table will be one more. The runner never asks which
// kind it holds.
package source

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/store"
)

// Source is one opened source of a job. It is used by one run (or plan) at
// a time and closed by its opener.
type Source interface {
	// Ctx is the source's stable id (Glue's transformation_ctx).
	Ctx() string
	// CheckDefinition returns a *ChangedError when prev, the source's
	// state in the bookmark, was written for another definition (path,
	// format, options, globs, tracking). It is called before a run is
	// recorded; a source that can tell only once connected returns nil
	// here and the same error from Plan. It changes nothing.
	CheckDefinition(ctx context.Context, prev bookmark.SourceState) error
	// Plan decides what this run reads. It reads the bookmark through
	// req.State and changes nothing, so it may be called again.
	Plan(ctx context.Context, req Request) (Plan, error)
	Close() error
}

// Resolver is a source whose definition names something the run must look
// up before it can plan: a catalog table and the partition keys its
// push_down_predicate names. Resolve is called before a run is recorded,
// so that a name that is not there is a job-file error (*job.Error, exit
// 2) and no run; any other error (the catalog unreadable) fails the run as
// planning would. Plan then uses what Resolve read. It changes nothing.
type Resolver interface {
	Resolve(ctx context.Context, cat catalog.Reader) error
}

// Placer is a Resolver whose folders are known only once resolved (a
// catalog table's location and its partitions'): Places, called after
// Resolve, returns them, with the s3: settings that open them, so that a
// sink inside one is refused before the run is recorded. It changes
// nothing.
type Placer interface {
	Places(ctx context.Context, cat catalog.Reader) ([]Place, map[string]string, error)
}

// Place is one folder a source reads: its location, and what it is for
// messages ("table db.t", "partition day=3 of table db.t").
type Place struct {
	Location string
	What     string
}

// StateReader is the part of the state store a source plans against.
type StateReader interface {
	Files(ctx context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error]
	RunInputs(ctx context.Context, job string, runIDs []string) iter.Seq2[store.FileRecord, error]
	RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error]
}

// Request is what a source plans against.
type Request struct {
	Job   string
	Mode  bookmark.Mode
	State StateReader
	// Prev is the source's state in the bookmark (HasPrev false: none).
	Prev    bookmark.SourceState
	HasPrev bool
	// RangeRuns, when not nil, are the enable runs (from, to] whose input
	// a pause run re-reads exactly.
	RangeRuns []string
	// AllowChange keeps a bookmark whose source definition changed.
	AllowChange bool
	Now         time.Time
	// DiskBudget caps the bytes this source may download into the spill
	// folder (0: no cap); what does not fit waits for the next run.
	DiskBudget int64
	// Count asks for a preview that counts what is new (tidemark plan); a
	// run reads instead of counting first.
	Count bool
	// Catalog is the state store's catalog, for sources that read a table
	// by name (nil: none; such a source fails to plan).
	Catalog catalog.Reader
}

// Plan is one source's part of one run. Its methods are called from the
// run's goroutine, never at the same time.
type Plan interface {
	// Pending is how much the run has to read: 0 means nothing new.
	Pending() int64
	// Downloads is the bytes of the run's disk budget the plan uses.
	Downloads() int64
	// Size is the files (or parts) and bytes the plan reads, for progress.
	Size() (files, bytes int64)
	// BadRecords is the source's on_bad_record policy (engine.Bad*).
	BadRecords() string
	// Report logs what was planned and what a user must hear of.
	Report(log *slog.Logger)
	// Preview is the plan as `tidemark plan` shows it.
	Preview() Preview
	// Open readies the planned input for one execution by an engine with
	// the given capabilities: it downloads, pipes or extracts only what the
	// engine cannot read itself. On error the run fails; what Open made is
	// deleted with env's temporary folders.
	Open(ctx context.Context, env Env) (Reading, error)
	// Count is the source's line of the run summary: after a successful
	// execution whose result for it is res, or with nothing executed (res
	// nil).
	Count(res *engine.SourceResult) store.Count
	// Advance is what the run commits for the source after a successful
	// execution whose result for it is res: its next bookmark state and
	// its input records. ok is false when the source has nothing to
	// commit (its state stays as it is).
	Advance(runID string, res engine.SourceResult) (a Advance, ok bool)
}

// Env is what a plan's Open may use.
type Env struct {
	Caps engine.Caps
	// Policy is the run's bad-record policy (the most lenient of its
	// sources'): sources re-read for skip and quarantine cannot stream.
	Policy string
	// TempDir returns the run's spill folder for inputs, made on first
	// use and deleted when the run ends.
	TempDir     func() (string, error)
	Concurrency int
	Progress    Progress
	Log         *slog.Logger
}

// Progress receives download progress (nil: none).
type Progress interface {
	Phase(name string, files, bytes int64)
	Add(files, bytes int64)
	Done()
}

// Reading is a plan's input readied for one execution.
type Reading interface {
	// Input is the engine's view of the source.
	Input() engine.Source
	// Done is called exactly once, after the engine returned engineErr
	// (res is its result for the source when engineErr is nil). It settles
	// what the source knows of the execution: retry reports that the plan
	// dropped inputs that changed or vanished meanwhile and the execution
	// must be run again without them (on the last attempt, last, it
	// returns an error instead); err is the source's own failure, which
	// is the cause of the run's failure (a truncated compressed file, an
	// extraction that failed) and wins over the engine's error.
	Done(ctx context.Context, engineErr error, res engine.SourceResult, last bool) (retry bool, err error)
}

// Advance is what a run commits for one source.
type Advance struct {
	State bookmark.SourceState
	// Added are the files the run read; Superseded the records they
	// replace (a modified file read again).
	Added      []store.FileRecord
	Superseded []store.FileRecord
	// Ranges are the key ranges the run read (SQL tables).
	Ranges []store.RangeRecord
}

// ChangedError means a source's definition changed under the same ctx
// since its bookmark was written.
type ChangedError struct {
	Ctx      string
	Was, Now string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("source %s changed since its bookmark was written (was %s, now %s): "+
		"run `tidemark bookmark reset` or use a new ctx to start over, or pass --allow-source-change to keep the bookmark",
		e.Ctx, e.Was, e.Now)
}

// MaxAttempts bounds how often a run executes its plan again without the
// inputs that changed (or vanished) while the engine read them.
const MaxAttempts = 5
