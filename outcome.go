package tidemark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// Reading back a commit's outcome: how often and how patiently.
var (
	outcomeAttempts = 6
	outcomeBackoff  = 250 * time.Millisecond
)

// CommitUnknownError is a run whose commit returned an error and whose
// run record could not be read back to tell whether it applied. The run
// published nothing and left its staged output where it was: if the
// commit applied, the next run (or bookmark reset) publishes it; if not,
// the next run deletes it with the run's other leftovers.
type CommitUnknownError struct {
	RunID  string
	Commit error // what Commit returned
	Read   error // what reading the run record back returned last
}

func (e *CommitUnknownError) Error() string {
	return fmt.Sprintf("committing run %s: %v; whether the commit applied is unknown (reading the run back: %v): "+
		"nothing was published, and the next `tidemark run` publishes the run if it committed and reads its input again if not",
		e.RunID, e.Commit, e.Read)
}

func (e *CommitUnknownError) Unwrap() error { return e.Commit }

// commitOutcome finds out whether a commit that returned commitErr applied,
// by reading the run record back (a bounded retry): the run succeeded with
// this run id, or it did not. An error from Commit does not say: the
// connection may have dropped after the store applied it, or a retry
// inside the store may have found its own first attempt applied
// (ErrVersionConflict, "run already succeeded"). It returns the head the
// commit made when it applied, applied false when it did not, and a
// *CommitUnknownError when the record cannot be read.
func commitOutcome(ctx context.Context, st store.Store, c store.Commit, commitErr error) (store.Head, bool, error) {
	// The run's context may be what failed the commit (a lost lease
	// cancels it): the read-back is bounded on its own.
	ctx = context.WithoutCancel(ctx)
	var readErr error
	backoff := outcomeBackoff
	for attempt := 1; attempt <= outcomeAttempts; attempt++ {
		if attempt > 1 {
			time.Sleep(backoff)
			backoff = min(2*backoff, 4*time.Second)
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		run, err := st.Run(rctx, c.Job, c.Run.RunID)
		cancel()
		switch {
		case errors.Is(err, store.ErrNotFound):
			return store.Head{}, false, nil // Commit records an unknown run: it did not
		case err != nil:
			readErr = err
			continue
		case run.Status != store.StatusSucceeded:
			return store.Head{}, false, nil
		}
		h := store.Head{Job: c.Job, Version: run.Version, UpdatedAt: run.FinishedAt}
		if c.Advance {
			h.RunID = run.RunID
		}
		return h, true, nil
	}
	return store.Head{}, false, &CommitUnknownError{RunID: c.Run.RunID, Commit: commitErr, Read: readErr}
}
