package memory

import (
	"testing"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := New(Options{})
		t.Cleanup(func() { s.Close() })
		return s
	})
}
