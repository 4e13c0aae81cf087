package objcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// runWrites gauges how many writes (or, with reads, reads) of run
// records are in flight at once: each waits, up to 20ms, for a fourth to
// join it.
type runWrites struct {
	Backend
	on, reads atomic.Bool
	in, most  atomic.Int64
}

func (g *runWrites) gauge(key string) {
	if !g.on.Load() || !strings.Contains(key, "/runs/") {
		return
	}
	n := g.in.Add(1)
	defer g.in.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	for end := time.Now().Add(20 * time.Millisecond); g.in.Load() < 4 && time.Now().Before(end); {
		time.Sleep(100 * time.Microsecond)
	}
}

func (g *runWrites) Put(ctx context.Context, key string, body []byte, c Cond) (string, error) {
	if !g.reads.Load() {
		g.gauge(key)
	}
	return g.Backend.Put(ctx, key, body, c)
}

func (g *runWrites) Get(ctx context.Context, key string) (Object, error) {
	if g.reads.Load() {
		g.gauge(key)
	}
	return g.Backend.Get(ctx, key)
}

// TestRewindMarksInParallel: a rewind to an old run marks the records of
// the runs it undoes several at a time (on S3 each is a read and a write:
// one at a time, a rewind over thousands of runs took minutes), and every
// one is marked.
func TestRewindMarksInParallel(t *testing.T) {
	ctx := t.Context()
	g := &runWrites{Backend: NewMemBackend("memory://"+t.Name(), nil)}
	s, err := Open(ctx, g, Options{Kind: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ImportJob(ctx, fingerprints("won", 40)); err != nil {
		t.Fatal(err)
	}
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	g.on.Store(true)
	undone, err := s.Reset(ctx, "j", l.Token, "won-r1", "test")
	g.on.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(undone) != 39 {
		t.Errorf("the rewind undid %d runs, want 39", len(undone))
	}
	if most := g.most.Load(); most < 4 {
		t.Errorf("at most %d run records were written at once, want 4 or more", most)
	}
	for v := 2; v <= 40; v++ {
		var r runObj
		if _, err := s.getJSON(ctx, runKey("j", fmt.Sprintf("won-r%d", v)), &r); err != nil || !r.Run.Undone {
			t.Errorf("the record of run won-r%d: undone %v, %v; want undone", v, r.Run.Undone, err)
		}
	}
}

// TestRunRangesReadsInParallel: the manifests of many runs (RunRanges,
// RunInputs: statecopy reads every run's) read the run records several at
// a time, and yield every run's records in Seq order.
func TestRunRangesReadsInParallel(t *testing.T) {
	ctx := t.Context()
	g := &runWrites{Backend: NewMemBackend("memory://"+t.Name(), nil)}
	s, err := Open(ctx, g, Options{Kind: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	h := fingerprints("won", 40)
	var ids []string
	for i := len(h.Runs) - 1; i >= 0; i-- { // newest first: the order is the store's
		id := h.Runs[i].Run.RunID
		ids = append(ids, id)
		h.Ranges = append(h.Ranges, store.RangeHistory{Added: h.Runs[i].Run.Version,
			RangeRecord: store.RangeRecord{Ctx: "tbl", RunID: id, Range: []byte(`{}`), Rows: h.Runs[i].Run.Seq}})
	}
	if err := s.ImportJob(ctx, h); err != nil {
		t.Fatal(err)
	}
	g.reads.Store(true)
	g.on.Store(true)
	var rows []int64
	for r, err := range s.RunRanges(ctx, "j", ids) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r.Rows)
	}
	g.on.Store(false)
	if len(rows) != 40 || !slices.IsSorted(rows) {
		t.Errorf("RunRanges yielded rows %v, want 1 to 40 in Seq order", rows)
	}
	if most := g.most.Load(); most < 4 {
		t.Errorf("at most %d run records were read at once, want 4 or more", most)
	}
}
