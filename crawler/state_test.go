package crawler

import (
	"testing"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// newState is the state store of a crawler test: store/memory, which keeps
// the catalog too.
func newState(t *testing.T) store.Store {
	t.Helper()
	return memory.New(memory.Options{})
}
