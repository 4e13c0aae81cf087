package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
	"github.com/tidemark-etl/tidemark/store/storetest"
)

// openTemp opens a new store in a temporary directory.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

func TestImport(t *testing.T) {
	storetest.RunImport(t, func(t *testing.T) store.Store { return openTemp(t) },
		func(t *testing.T) store.Store { return memory.New(memory.Options{}) })
}
