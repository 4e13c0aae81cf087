package tidemark

import (
	"errors"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// The contract's exit codes.
const (
	ExitOK        = 0 // the run succeeded (or there was nothing to do)
	ExitFailed    = 1 // the run failed; the bookmark did not move
	ExitUsage     = 2 // a usage or job-file error: nothing ran
	ExitLeaseHeld = 3 // another run holds the job's lease
)

// ExitCode maps an error of Run, Plan, Reset or a Session to the
// contract's exit codes.
func ExitCode(err error) int {
	var je *job.Error
	var sc *source.ChangedError
	var so *sink.OwnedError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, store.ErrLeaseHeld):
		return ExitLeaseHeld
	case errors.As(err, &je), errors.As(err, &sc), errors.As(err, &so), errors.Is(err, ErrUsage), errors.Is(err, store.ErrNoState):
		return ExitUsage
	}
	return ExitFailed
}
