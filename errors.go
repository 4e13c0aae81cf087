package tidemark

import (
	"errors"

	"github.com/tidemark-etl/tidemark/store"
)

// ErrUsage marks errors in how tidemark was called (exit code 2).
var ErrUsage = errors.New("usage")

func isLeaseLost(err error) bool { return errors.Is(err, store.ErrLeaseLost) }
