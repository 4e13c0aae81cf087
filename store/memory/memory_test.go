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

func TestStoreClock(t *testing.T) {
	storetest.RunClock(t, func(t *testing.T, clock *storetest.Clock) store.Store {
		return New(Options{Now: clock.Now})
	})
}

func TestImport(t *testing.T) {
	open := func(t *testing.T) store.Store { return New(Options{}) }
	storetest.RunImport(t, open, open)
}
