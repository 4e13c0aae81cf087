package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// ErrJobExists means an import found state of the job already in the store
// (a run or a bookmark version).
var ErrJobExists = errors.New("the job already has state in this store")

// JobHistory is everything a store holds about one job, lease aside: what
// `tidemark state copy` moves from one store to another (statecopy reads
// it through the Store contract, an Importer writes it).
type JobHistory struct {
	Job string
	// Versions are every bookmark version, oldest first, each with its
	// source states; the last is the head.
	Versions []VersionStates
	// Runs are every run, in Seq order, with its output manifest and
	// publish actions (Output.Published as recorded).
	Runs []RunHistory
	// Files are every file record of the current lineage, superseded ones
	// included.
	Files []FileHistory
	// Ranges are every key range record of the current lineage.
	Ranges []RangeHistory
}

// VersionStates is one bookmark version and its source states.
type VersionStates struct {
	Version
	States map[string]bookmark.SourceState
}

// RunHistory is one run's record with its outputs and actions.
type RunHistory struct {
	Run     Run
	Outputs []Output
	Actions []SinkAction
}

// FileHistory is one file record: read by RunID, added to the bookmark at
// version Added, superseded at version Removed (0 while current).
type FileHistory struct {
	FileRecord
	RunID   string
	Added   int64
	Removed int64
}

// RangeHistory is one key range record, added at version Added; its
// RangeRecord.RunID names its run.
type RangeHistory struct {
	RangeRecord
	Added int64
}

// Importer is a Store that can write a job's history as it was: versions
// with their numbers, kinds, times and who asked; runs with their Seq,
// Attempt, status, times, host, Undone and Purged marks; outputs with
// their published marks; file and range records with the versions that
// added and superseded them. Readers of the store then see exactly what
// the store the history was read from showed (Head, Versions,
// SourceStatesAt, Files, RunInputs, RunRanges, Runs, Run, Outputs,
// Actions, Unpublished, PublishedOutputs). No lease is written: the job's
// lease is free after an import, and its next fencing token is the
// store's own.
type Importer interface {
	// ImportJob writes h atomically: on error nothing was written. It
	// refuses, with ErrJobExists, a job of which the store has a run or a
	// bookmark version, and with a plain error a history that fails
	// CheckHistory. Not idempotent: a retry after an unknown outcome that
	// had succeeded fails with ErrJobExists (then Head and Runs tell).
	ImportJob(ctx context.Context, h JobHistory) error
}

// CheckHistory checks what every Importer relies on: a job name, versions
// numbered 1, 2, ... with known kinds, runs numbered by Seq 1, 2, ... with
// distinct ids, and records that name runs of the history and versions it
// has.
func CheckHistory(h *JobHistory) error {
	if h.Job == "" {
		return errors.New("importing a job history: no job name")
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("importing the history of job %q: %s", h.Job, fmt.Sprintf(format, args...))
	}
	for i, v := range h.Versions {
		if v.Version.Version != int64(i+1) {
			return bad("version %d at position %d, want versions 1, 2, ... in order", v.Version.Version, i+1)
		}
		switch v.Kind {
		case KindCommit, KindReset, KindRewind:
		default:
			return bad("version %d has kind %q", v.Version.Version, v.Kind)
		}
	}
	last := int64(len(h.Versions))
	runs := map[string]bool{}
	for i, r := range h.Runs {
		switch {
		case r.Run.Job != h.Job:
			return bad("run %s belongs to job %q", r.Run.RunID, r.Run.Job)
		case r.Run.Seq != int64(i+1):
			return bad("run %s has seq %d at position %d, want seqs 1, 2, ... in order", r.Run.RunID, r.Run.Seq, i+1)
		case r.Run.RunID == "" || runs[r.Run.RunID]:
			return bad("run id %q is empty or repeated", r.Run.RunID)
		case r.Run.Version > last:
			return bad("run %s names version %d, the history has %d", r.Run.RunID, r.Run.Version, last)
		}
		switch r.Run.Status {
		case StatusRunning, StatusSucceeded, StatusFailed:
		default:
			return bad("run %s has status %q", r.Run.RunID, r.Run.Status)
		}
		runs[r.Run.RunID] = true
	}
	for _, f := range h.Files {
		if !runs[f.RunID] || f.Added < 1 || f.Added > last || (f.Removed != 0 && (f.Removed <= f.Added || f.Removed > last)) {
			return bad("file record %s of source %q: run %s, added at %d, removed at %d do not fit the history",
				f.File.Path, f.Ctx, f.RunID, f.Added, f.Removed)
		}
	}
	for _, r := range h.Ranges {
		if !runs[r.RunID] || r.Added < 1 || r.Added > last {
			return bad("range record of source %q: run %s, added at %d do not fit the history", r.Ctx, r.RunID, r.Added)
		}
	}
	return nil
}
