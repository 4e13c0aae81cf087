package s3

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/storetest"
)

// TestStore runs the state-store suite on versitygw, each case in a
// prefix of its own.
func TestStore(t *testing.T) {
	srv := startServer(t)
	var n atomic.Int64
	storetest.Run(t, func(t *testing.T) store.Store {
		return srv.open(t, fmt.Sprintf("state-%d/", n.Add(1)), Options{})
	})
}
