package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// largeCommit is the number of files of testLargeCommit: a first run over a
// large backlog.
const largeCommit = 100_000

func testStats(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Added = recs(src, file("a", 1), file("b", 1), file("c", 1))
	c.Outputs = []store.Output{output("r1", "sink", "p0"), output("r1", "sink", "p1")}
	mustCommit(t, s, c)
	begin(t, s, l, "r2", bookmark.ModeEnable)
	st, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st) == 0 {
		t.Fatal("Stats is empty")
	}
	for k, v := range st {
		if v < 0 {
			t.Errorf("Stats[%q] = %d, want >= 0", k, v)
		}
	}
	t.Logf("stats: %v", st)
}

func testLargeCommit(t *testing.T, s store.Store) {
	if testing.Short() {
		t.Skip("100k-file commit skipped with -short")
	}
	l := acquire(t, s, job, "r")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", largeCommit)}
	c.Added = make([]store.FileRecord, largeCommit)
	for i := range c.Added {
		// Descending, so that a backend that returns insertion order fails.
		n := largeCommit - 1 - i
		c.Added[i] = store.FileRecord{Ctx: src, File: bookmark.File{
			Path: fmt.Sprintf("year=2025/month=%02d/part-%07d.csv.gz", n%12+1, n), Size: int64(n), MTime: t0.UnixNano() + int64(n),
			ETag: fmt.Sprintf("%032x", n),
		}}
	}
	start := time.Now()
	mustCommit(t, s, c)
	took := time.Since(start)
	t.Logf("commit of %d files: %s", largeCommit, took)

	start = time.Now()
	n, prev := 0, ""
	for f, err := range s.Files(t.Context(), job, src) {
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && f.Path <= prev {
			t.Fatalf("Files out of order at %d: %q after %q", n, f.Path, prev)
		}
		prev = f.Path
		n++
	}
	t.Logf("streaming %d files: %s", n, time.Since(start))
	if n != largeCommit {
		t.Errorf("Files yielded %d records, want %d", n, largeCommit)
	}
	if took > time.Minute {
		t.Errorf("commit of %d files took %s, want well under a minute", largeCommit, took)
	}
}
