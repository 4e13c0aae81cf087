package s3

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
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

// TestImport runs the state-copy cases: histories copied into S3 from
// itself and from the memory store, and out of S3 into memory.
func TestImport(t *testing.T) {
	srv := startServer(t)
	var n atomic.Int64
	storetest.RunImport(t, func(t *testing.T) store.Store {
		return srv.open(t, fmt.Sprintf("import-%d/", n.Add(1)), Options{})
	}, func(t *testing.T) store.Store { return memory.New(memory.Options{}) })
}
