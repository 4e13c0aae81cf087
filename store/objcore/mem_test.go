package objcore_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/objcore/backendtest"
)

func TestMemBackend(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) objcore.Backend { return objcore.NewMemBackend("memory://"+t.Name(), nil) })
}

// TestMemBackendListPage: a listing stopped after a few entries copies a
// bounded page of the keys, not every key below the prefix (a page of
// runs, newest first, listed the whole run index).
func TestMemBackendListPage(t *testing.T) {
	ctx := t.Context()
	b := objcore.NewMemBackend("memory://"+t.Name(), nil)
	const keys = 50_000
	for i := range keys {
		if _, err := b.Put(ctx, fmt.Sprintf("jobs/j/seqs/%09d-r", i), nil, objcore.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	err := b.List(ctx, "jobs/j/seqs/", "jobs/j/seqs/000000100", func(e objcore.Entry) (bool, error) {
		n++
		return n < 10, nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("listed %d entries, want 10", n)
	}
	// Every key copied is an Entry of 24 bytes: the whole index is over
	// a megabyte.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 {
		t.Errorf("a listing of 10 entries allocated %d bytes, want a bounded page (under 256 KiB)", alloc)
	}
	// Listed past a page, in order, every key once.
	var got []string
	if err := b.List(ctx, "jobs/j/seqs/", "", func(e objcore.Entry) (bool, error) {
		got = append(got, e.Key)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != keys || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != keys {
		t.Errorf("the whole listing has %d keys (sorted %v), want %d once each", len(got), slices.IsSorted(got), keys)
	}
}
