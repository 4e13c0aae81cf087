package s3

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/objcore/backendtest"
)

// TestBackend runs the backend suite on versitygw, each case in a prefix
// of its own.
func TestBackend(t *testing.T) {
	srv := startServer(t)
	var n atomic.Int64
	backendtest.Run(t, func(t *testing.T) objcore.Backend {
		return srv.open(t, fmt.Sprintf("backend-%d/", n.Add(1)), Options{}).b
	})
}
