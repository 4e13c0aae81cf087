// Package store defines tidemark's state store: bookmarks with every
// committed version, runs, input and output manifests, leases and the
// catalog. Backends (store/sqlite and store/postgres, two dialects of
// store/sqlstore; store/s3; store/memory for tests) implement Store and
// register themselves by URL scheme; every backend passes store/storetest.
// The rules they all decide alike (rules.go) are written here once.
package store

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/manifest"
)

// Sentinel errors that callers test with errors.Is.
var (
	// ErrLeaseHeld means another live holder has the job's lease. The error
	// returned is a *LeaseHeldError that names the holder.
	ErrLeaseHeld = errors.New("lease held by another run")
	// ErrLeaseLost means the caller's fencing token is no longer current: its
	// lease expired and another run took it.
	ErrLeaseLost = errors.New("lease lost")
	// ErrVersionConflict means the bookmark moved since the caller read it.
	ErrVersionConflict = errors.New("bookmark version conflict")
	// ErrNotFound means the job or run does not exist.
	ErrNotFound = errors.New("not found")
)

// Holder describes who holds a lease.
type Holder struct {
	ID      string    `json:"id"` // unique per process/run, e.g. the run id
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// Lease is a held lease on one job. Token is the fencing token: it grows
// with every acquisition of the job's lease and is checked at commit.
type Lease struct {
	Job     string
	Token   int64
	Holder  Holder
	Expires time.Time
}

// LeaseHeldError is returned (wrapping ErrLeaseHeld) when the lease is held.
type LeaseHeldError struct {
	Job     string
	Token   int64 // the holder's fencing token, for BreakLease
	Holder  Holder
	Expires time.Time
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("job %q is being run by %s (host %s, pid %d, started %s); lease expires %s",
		e.Job, e.Holder.ID, e.Holder.Host, e.Holder.PID,
		e.Holder.Started.UTC().Format(time.RFC3339), e.Expires.UTC().Format(time.RFC3339))
}

func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// Head is a job's current bookmark version. Version 0 with an empty RunID
// is the state of a job that never committed; a full reset leaves an empty
// RunID under a new, higher Version (versions only grow, so a commit
// planned before the reset fails with ErrVersionConflict).
type Head struct {
	Job       string    `json:"job"`
	Version   int64     `json:"version"`
	RunID     string    `json:"run_id"` // the run whose commit (or rewind target) the version holds
	UpdatedAt time.Time `json:"updated_at"`
}

// Run statuses.
const (
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Run is one run's record.
type Run struct {
	Job        string           `json:"job"`
	RunID      string           `json:"run_id"`
	Seq        int64            `json:"seq"` // order of runs within the job, assigned by the store at BeginRun
	Attempt    int              `json:"attempt"`
	Mode       bookmark.Mode    `json:"mode"`
	Status     string           `json:"status"`
	Sources    map[string]Count `json:"sources"`
	Sinks      map[string]Count `json:"sinks"`
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at,omitzero"`
	Error      string           `json:"error,omitempty"`
	// Version is the bookmark version this run committed (enable runs), or
	// the version it read (other modes). 0 until committed.
	Version int64 `json:"version"`
	// Undone is set when a reset or rewind undid this run's bookmark and
	// (with purge) its output.
	Undone bool `json:"undone,omitempty"`
	// Purged is set once --purge-output deleted this run's published output.
	Purged bool `json:"purged,omitempty"`
	// JobFile is the absolute path of the job file the run was made from
	// (empty for runs made in code without one, and for runs recorded by
	// an older tidemark), for tools that plan the job again (serve).
	JobFile string `json:"job_file,omitempty"`
	// Host is the identity of the host that ran it (hostname:pid by
	// default, overridable; the lease Holder's Host), shown by runs and by
	// the exit-3 message. Empty for runs recorded by an older tidemark.
	Host string `json:"host,omitempty"`
}

// FileRecord is one processed file of one source ctx (a run's file input).
type FileRecord = manifest.FileInput

// RangeRecord is the key range one run read from a SQL table source ctx.
type RangeRecord = manifest.RangeInput

// Output is one output of a run (manifest.Output: a file, a multipart
// upload or a table load).
type Output = manifest.Output

// SinkAction is a publish-time action that replaces old output (overwrite
// modes). It is recorded with the commit so a roll-forward repeats it.
type SinkAction struct {
	Sink string `json:"sink"`
	Root string `json:"root"`
	// Mode is the sink mode: "overwrite" deletes every published file of the
	// sink not written by this run; "overwrite_partitions" does so within
	// Partitions only.
	Mode       string   `json:"mode"`
	Partitions []string `json:"partitions,omitempty"` // partition folders, e.g. "product=a"
}

// Commit is everything one run makes durable, in one transaction.
type Commit struct {
	Job   string
	Token int64 // fencing token of the lease the run holds
	// BaseVersion is the bookmark version the run planned against; with
	// Advance the commit fails with ErrVersionConflict unless it is still
	// the head, and the new head is BaseVersion+1.
	BaseVersion int64
	Advance     bool
	Run         Run // final record; Status is StatusSucceeded
	// Sources holds every source ctx's new state (Advance only).
	Sources map[string]bookmark.SourceState
	// Added are the files this run read, recorded for exact tracking and as
	// the run's input manifest (Advance only).
	Added []FileRecord
	// Superseded are earlier records replaced by a new version of the same
	// path (on_modified: reprocess) (Advance only).
	Superseded []FileRecord
	// Ranges are the key ranges this run read from SQL table sources,
	// recorded as the run's input manifest (Advance only).
	Ranges  []RangeRecord
	Outputs []Output
	Actions []SinkAction
	// Catalog is applied in the same transaction as the rest of the commit
	// (a sink registering its table and new partitions), with the same
	// rules as catalog.Store.ApplyCatalog: a stale table Base fails the
	// whole commit with catalog.ErrConflict.
	Catalog catalog.Changes
}

// Identity names one state store.
type Identity struct {
	// ID is random, made when the store was created.
	ID string `json:"id"`
	// Location is where the store is, for people reading a message or a
	// sink's ownership record: a path or a URL without secrets.
	Location string `json:"location"`
}

// Store is the state store. All methods are safe for concurrent use by
// several processes; a method that returns an error changed nothing, unless
// its comment says otherwise. Every method may be retried after an error
// (a timeout, a lost connection): reads and the writes marked idempotent
// simply run again; the other writes say what a retry sees.
//
// Every write a run makes under the job's lease carries the lease's fencing
// token: if it is not the job's current token (the lease was broken, or
// expired and was taken by another run) the write fails with ErrLeaseLost
// and changes nothing. Expiry alone fences nothing out: a holder whose
// lease expired but was not taken may still write, and renew it.
//
// Every store keeps the data catalog too (catalog.Store): not under any
// job's lease, and written atomically with a run's commit through
// Commit.Catalog.
type Store interface {
	catalog.Store

	// AcquireLease takes the job's lease for ttl if it is free or expired,
	// with a fencing token greater than any before. If a live holder has it,
	// it returns a *LeaseHeldError at once (no waiting). Expiry is judged
	// by the store's clock (Now), never the caller's. Not idempotent: a
	// retry after an unknown outcome may see its own lease as held
	// (LeaseHeldError naming the same Holder.ID).
	AcquireLease(ctx context.Context, job string, h Holder, ttl time.Duration) (Lease, error)
	// RenewLease extends a held lease to ttl from now on the store's clock
	// (expiry is judged by the store's clock, never the caller's);
	// ErrLeaseLost if the token is stale. Idempotent.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// BreakLease frees the job's lease if its token is still token: for a
	// holder known to be dead (a crashed process on this host). A live
	// holder that was broken cannot write: its token is stale. Whether the
	// lease had expired does not matter (expiry is judged by the store's
	// clock, never the caller's). Idempotent.
	BreakLease(ctx context.Context, job string, token int64) error
	// ReleaseLease frees the lease if the token is still current; releasing
	// a lost lease is not an error. Idempotent.
	ReleaseLease(ctx context.Context, l Lease) error
	// Now returns the time on the store's clock: the clock that judges
	// lease expiry and stamps the times a caller leaves zero. A read.
	Now(ctx context.Context) (time.Time, error)

	// Head returns the job's current bookmark version (Version 0 if none).
	// A read.
	Head(ctx context.Context, job string) (Head, error)
	// SourceStates returns the source states of the job's head version (an
	// empty map if none). A read.
	SourceStates(ctx context.Context, job string) (map[string]bookmark.SourceState, error)
	// Versions returns the job's bookmark versions newest first, bounded by
	// q: at most q.Limit (0: all), with Version below q.Before (0: from the
	// head). An unknown job has none. A read.
	Versions(ctx context.Context, job string, q VersionQuery) ([]Version, error)
	// SourceStatesAt returns the source states of one bookmark version, as
	// its commit or reset wrote them (an empty map for a version with none);
	// ErrNotFound for a version the job does not have. A read.
	SourceStatesAt(ctx context.Context, job string, version int64) (map[string]bookmark.SourceState, error)
	// Files yields the current (not superseded) file records of one source
	// ctx in ascending Path order (byte order), streaming, from one
	// snapshot. A read error is yielded once, last; breaking out of the
	// loop ends the read.
	Files(ctx context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error]
	// RunInputs yields the files recorded by the given runs (superseded
	// records included), per source ctx, in Path order within each ctx,
	// from one snapshot. Records of runs undone by a reset are gone;
	// unknown run ids yield nothing. A read error is yielded once, last.
	RunInputs(ctx context.Context, job string, runIDs []string) iter.Seq2[FileRecord, error]
	// RunRanges yields the key ranges recorded by the given runs, ordered
	// by ctx, then run Seq, from one snapshot; each record's RunID names
	// its run. Records of runs undone by a reset are gone; unknown run ids
	// yield nothing. A read error is yielded once, last.
	RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[RangeRecord, error]

	// BeginRun records a run as running and assigns its Seq and Attempt
	// (1 + the number of failed runs since the last succeeded one), under
	// the job's lease: ErrLeaseLost if token is not the job's current
	// lease token. A run id may be begun once: a retry after an unknown
	// outcome fails (the run exists) and Run reads what was recorded.
	BeginRun(ctx context.Context, token int64, r Run) (Run, error)
	// FailRun records a running run's failure under the job's lease
	// (ErrLeaseLost if token is stale); the bookmark does not move.
	// ErrNotFound for an unknown run; a run already finished is not
	// changed and is an error (a retry after an unknown outcome that had
	// succeeded says the run already failed).
	FailRun(ctx context.Context, job string, token int64, runID string, finished time.Time, summary Run, msg string) error
	// Commit makes c durable atomically: run record, outputs, actions and,
	// with Advance, the new bookmark version. ErrLeaseLost if c.Token is not
	// the job's current lease token; ErrVersionConflict on a stale base.
	// Not idempotent: a retry after an unknown outcome that had succeeded
	// fails (ErrVersionConflict, or the run already succeeded); Head and
	// Run tell whether it had.
	Commit(ctx context.Context, c Commit) (Head, error)
	// Runs returns the job's runs newest (highest Seq) first, bounded by q:
	// at most q.Limit runs (0: all), with Seq below q.BeforeSeq (0: from
	// the newest). An unknown job has none. To walk every run in pages,
	// pass the last Seq of one page as the next's BeforeSeq (AllRuns does).
	// A read.
	Runs(ctx context.Context, job string, q RunQuery) ([]Run, error)
	// Run returns one run; ErrNotFound if unknown. A read.
	//
	// Runs and Run may report a run recorded running as failed when the
	// lease it was begun under is gone and a run with a higher Seq
	// succeeded: it is dead, and the runner's search for dead runs stops
	// at the newest succeeded run. A backend whose
	// BeginRun is more than one atomic write must: a host stopped between
	// the writes can leave a record below runs begun after it.
	Run(ctx context.Context, job, runID string) (Run, error)

	// Outputs returns the outputs of a run, ordered by sink then Final
	// (none for an unknown run). A read.
	Outputs(ctx context.Context, job, runID string) ([]Output, error)
	// Actions returns the publish actions of a run in commit order (none
	// for an unknown run). A read.
	Actions(ctx context.Context, job, runID string) ([]SinkAction, error)
	// Unpublished returns the committed, not undone runs whose outputs are
	// not all published yet, oldest first (what a roll-forward must
	// finish). A read.
	Unpublished(ctx context.Context, job string) ([]Run, error)
	// MarkPublished records that all of a run's outputs are in place, under
	// the job's lease (ErrLeaseLost if token is stale). Idempotent;
	// ErrNotFound for an unknown run.
	MarkPublished(ctx context.Context, job string, token int64, runID string) error
	// PublishedOutputs yields, in one query and streaming, the outputs at
	// root (Output.Root exactly) that the job's succeeded runs published
	// and that no purge has deleted since: what the job's manifests say it
	// has in that location (an overwrite replaces these and nothing else).
	// Runs undone without purge count: their output is still there. Order
	// is unspecified; a read error is yielded once, last.
	PublishedOutputs(ctx context.Context, job, root string) iter.Seq2[Output, error]

	// Reset restores the bookmark as run toRunID committed it (or clears it
	// when toRunID is empty) under a new head version, marks every later
	// committed run (any mode) Undone and returns them, oldest first.
	// toRunID must name a committed, not undone, enable-mode run
	// (ErrNotFound if unknown). ErrLeaseLost if token is stale. Not
	// idempotent: each call makes a new version; a retry after an unknown
	// outcome that had succeeded makes another, undoing nothing more.
	// by names who asked (recorded with the version, Version.By; may be
	// empty).
	Reset(ctx context.Context, job string, token int64, toRunID, by string) ([]Run, error)
	// MarkPurged records that a run's published output was deleted, under
	// the job's lease (ErrLeaseLost if token is stale). Idempotent;
	// ErrNotFound for an unknown run.
	MarkPurged(ctx context.Context, job string, token int64, runID string) error

	// Identity returns the store's identity: an ID made at random when the
	// store was created and kept inside it (the same for every process and
	// every later open; a copy of the store, a backup restored, has the same
	// ID; a store made anew where one was lost has another), and where it
	// is, for messages. Sinks record it to tell their owner's state from
	// another (store.Identity). A read.
	Identity(ctx context.Context) (Identity, error)

	// Stats returns backend-specific size figures (for reports). A read.
	Stats(ctx context.Context) (map[string]int64, error)
	// Close releases the store's resources; no method may be called after.
	Close() error
}

// JobLister is a Store that can list the jobs it holds state for (for
// messages about an unknown job).
type JobLister interface {
	Jobs(ctx context.Context) ([]string, error)
}

// LeaseReader is a Store that can tell who holds a job's lease without
// taking it (for dashboards and metrics).
type LeaseReader interface {
	// CurrentLease returns the job's lease and true when one is recorded
	// and has not expired on the store's clock; false when the lease is
	// free. A read: retry freely.
	CurrentLease(ctx context.Context, job string) (Lease, bool, error)
}
