package tidemark

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// StateLocation picks the state store: the --state flag, the job file's
// state:, $TIDEMARK_STATE, then .tidemark/state.db next to the job file
// (or in the working directory when there is no job file).
func StateLocation(flag string, spec *job.Spec) string {
	loc, _ := StateOrigin(flag, spec)
	return loc
}

// StateOrigin is StateLocation and, for messages, why that location was
// chosen.
func StateOrigin(flag string, spec *job.Spec) (location, origin string) {
	if flag != "" {
		return flag, "given with --state"
	}
	if spec != nil && spec.State != "" {
		why := "the state: of job file " + spec.File
		if strings.Contains(spec.State, "://") || filepath.IsAbs(spec.State) {
			return spec.State, why
		}
		return filepath.Join(spec.Dir, spec.State), why
	}
	if env := os.Getenv("TIDEMARK_STATE"); env != "" {
		return env, "from $TIDEMARK_STATE (no --state, and no job file with a state:)"
	}
	if spec != nil {
		return filepath.Join(spec.Dir, job.DefaultStateFile),
			"the default " + job.DefaultStateFile + " next to job file " + spec.File + " (no --state, no state: in the job file, no $TIDEMARK_STATE)"
	}
	wd, _ := os.Getwd()
	return job.DefaultStateFile, "the default " + job.DefaultStateFile + " in the working directory " + wd +
		" (no --state, no job file, no $TIDEMARK_STATE)"
}

// stateOrder is how the state location is chosen, for messages.
const stateOrder = "the state location is, in order: --state, the job file's state:, $TIDEMARK_STATE, " +
	"then .tidemark/state.db next to the job file (in the working directory for a bare job name)"

// StateError is a state store that could not be opened, with where it was
// looked for and why there.
type StateError struct {
	Location string // redacted
	Origin   string // why this location (StateOrigin)
	Err      error
}

func (e *StateError) Error() string {
	if errors.Is(e.Err, store.ErrNoState) {
		return fmt.Sprintf("%v (%s); this command never creates state (tidemark run does); %s", e.Err, e.Origin, stateOrder)
	}
	return fmt.Sprintf("state store %s (%s): %v", e.Location, e.Origin, e.Err)
}

func (e *StateError) Unwrap() error { return e.Err }

// OpenState opens the state store at location. A location with a
// password or token inline (from --state or TIDEMARK_STATE; the job
// file's state: is refused by its validation) is a usage error, and the
// message shows it masked. A plain path is checked too: a key=value
// connection string or a DSN would be taken as a SQLite file's path and
// its password made a file name.
func OpenState(ctx context.Context, location string) (store.Store, error) {
	if err := inlineStateSecret(location); err != nil {
		return nil, err
	}
	return store.Open(ctx, location)
}

// inlineStateSecret refuses a state location with a password or token
// inline, showing it masked.
func inlineStateSecret(location string) error {
	if found, masked := secret.Find(location); len(found) > 0 {
		return fmt.Errorf("%w: state %q holds a secret inline (%s); %s", ErrUsage, masked, secret.Describe(found), job.StateHint(location))
	}
	return nil
}

// OpenExistingState opens the state store chosen by flag and spec (see
// StateOrigin) for a command about existing state: it creates nothing,
// and with readOnly writes nothing. Errors are *StateError; one wrapping
// store.ErrNoState when there is no store there.
func OpenExistingState(ctx context.Context, flag string, spec *job.Spec, readOnly bool) (store.Store, error) {
	loc, origin := StateOrigin(flag, spec)
	if err := inlineStateSecret(loc); err != nil {
		return nil, err
	}
	st, err := store.OpenExisting(ctx, loc, readOnly)
	if err != nil {
		return nil, &StateError{Location: store.Redact(loc), Origin: origin, Err: err}
	}
	return st, nil
}

// noState is the state of a job whose state store does not exist yet:
// empty, for reading only (tidemark plan before the first run).
type noState struct{}

var _ store.Store = noState{}

var errNoStateWrite = errors.New("no state store to write to")

func (noState) AcquireLease(context.Context, string, store.Holder, time.Duration) (store.Lease, error) {
	return store.Lease{}, errNoStateWrite
}
func (noState) RenewLease(context.Context, store.Lease, time.Duration) (store.Lease, error) {
	return store.Lease{}, errNoStateWrite
}
func (noState) BreakLease(context.Context, string, int64) error { return errNoStateWrite }
func (noState) ReleaseLease(context.Context, store.Lease) error { return nil }
func (noState) Head(_ context.Context, job string) (store.Head, error) {
	return store.Head{Job: job}, nil
}
func (noState) SourceStates(context.Context, string) (map[string]bookmark.SourceState, error) {
	return map[string]bookmark.SourceState{}, nil
}
func (noState) Files(context.Context, string, string) iter.Seq2[bookmark.File, error] {
	return func(func(bookmark.File, error) bool) {}
}
func (noState) RunInputs(context.Context, string, []string) iter.Seq2[store.FileRecord, error] {
	return func(func(store.FileRecord, error) bool) {}
}
func (noState) RunRanges(context.Context, string, []string) iter.Seq2[store.RangeRecord, error] {
	return func(func(store.RangeRecord, error) bool) {}
}
func (noState) BeginRun(context.Context, int64, store.Run) (store.Run, error) {
	return store.Run{}, errNoStateWrite
}
func (noState) FailRun(context.Context, string, int64, string, time.Time, store.Run, string) error {
	return errNoStateWrite
}
func (noState) Commit(context.Context, store.Commit) (store.Head, error) {
	return store.Head{}, errNoStateWrite
}
func (noState) Runs(context.Context, string, store.RunQuery) ([]store.Run, error) {
	return nil, nil
}
func (noState) Run(context.Context, string, string) (store.Run, error) {
	return store.Run{}, store.ErrNotFound
}
func (noState) Outputs(context.Context, string, string) ([]store.Output, error)     { return nil, nil }
func (noState) Actions(context.Context, string, string) ([]store.SinkAction, error) { return nil, nil }
func (noState) Unpublished(context.Context, string) ([]store.Run, error)            { return nil, nil }
func (noState) MarkPublished(context.Context, string, int64, string) error          { return errNoStateWrite }
func (noState) Reset(context.Context, string, int64, string, string) ([]store.Run, error) {
	return nil, errNoStateWrite
}
func (noState) Versions(context.Context, string, store.VersionQuery) ([]store.Version, error) {
	return nil, nil
}
func (noState) SourceStatesAt(context.Context, string, int64) (map[string]bookmark.SourceState, error) {
	return nil, store.ErrNotFound
}
func (noState) MarkPurged(context.Context, string, int64, string) error { return errNoStateWrite }
func (noState) Now(context.Context) (time.Time, error)                  { return time.Now().UTC(), nil }
func (noState) Stats(context.Context) (map[string]int64, error) {
	return map[string]int64{}, nil
}
func (noState) Close() error                                     { return nil }
func (noState) Identity(context.Context) (store.Identity, error) { return store.Identity{}, nil }
func (noState) PublishedOutputs(context.Context, string, string) iter.Seq2[store.Output, error] {
	return func(func(store.Output, error) bool) {}
}
