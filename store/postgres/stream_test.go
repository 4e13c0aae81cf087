package postgres

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestStreamsMillionFiles: a job with 1,000,000 processed files is read
// through Files and RunInputs in bounded memory (segments read one at a
// time), in order, and a loop that stops early ends the read.
func TestStreamsMillionFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("1M-file streaming skipped with -short")
	}
	const n = 1_000_000
	db := newDB(t)
	s := db.openAt(t, db.location("big"))
	l, err := s.AcquireLease(t.Context(), "job", store.Holder{ID: "a"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: "job", RunID: "r1", Mode: bookmark.ModeEnable})
	if err != nil {
		t.Fatal(err)
	}
	// Committed in one commit; the records are garbage before measuring.
	func() {
		c := store.Commit{Job: "job", Token: l.Token, Advance: true, Run: r,
			Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Fingerprint: "fp", Files: n}},
			Added:   make([]store.FileRecord, n)}
		for i := range n {
			c.Added[i] = store.FileRecord{Ctx: "src", File: bookmark.File{Path: fmt.Sprintf("year=2026/part-%09d.csv.gz", i+1),
				Size: int64(i), MTime: int64(i), ETag: fmt.Sprintf("%032x", i)}}
		}
		c.Run.Status = store.StatusSucceeded
		if _, err := s.Commit(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}()

	peak := func(each func(yield func() bool)) (count int, grew uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		each(func() bool {
			count++
			if count%100_000 == 0 {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > base {
					grew = max(grew, ms.HeapInuse-base)
				}
			}
			return true
		})
		return count, grew
	}
	const bound = 48 << 20 // 1M records held would take about 100 MB
	count, grew := peak(func(next func() bool) {
		prev := ""
		for f, err := range s.Files(t.Context(), "job", "src") {
			if err != nil {
				t.Fatal(err)
			}
			if f.Path <= prev {
				t.Fatalf("Files out of order: %q after %q", f.Path, prev)
			}
			prev = f.Path
			next()
		}
	})
	t.Logf("Files: %d records, heap grew at most %d MB", count, grew>>20)
	if count != n || grew > bound {
		t.Errorf("Files: %d records with the heap %d MB above its start; want %d within %d MB", count, grew>>20, n, bound>>20)
	}
	count, grew = peak(func(next func() bool) {
		for _, err := range s.RunInputs(t.Context(), "job", []string{"r1"}) {
			if err != nil {
				t.Fatal(err)
			}
			next()
		}
	})
	t.Logf("RunInputs: %d records, heap grew at most %d MB", count, grew>>20)
	if count != n || grew > bound {
		t.Errorf("RunInputs: %d records with the heap %d MB above its start; want %d within %d MB", count, grew>>20, n, bound>>20)
	}
	// Stopping early closes the cursor; the store goes on working.
	for range 5 {
		for _, err := range s.Files(t.Context(), "job", "src") {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := s.Head(t.Context(), "job"); err != nil {
		t.Fatal(err)
	}
}
