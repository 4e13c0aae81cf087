package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// TestOpenByName: store.Open of one memory://NAME gives one store, another
// NAME another.
func TestOpenByName(t *testing.T) {
	ctx := t.Context()
	a, err := store.Open(ctx, "memory://open-by-name-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.BeginRun(ctx, store.Run{Job: "j", RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	again, err := store.Open(ctx, "memory://open-by-name-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Run(ctx, "j", "r1"); err != nil {
		t.Errorf("run begun in memory://open-by-name-a, read after reopening: %v", err)
	}
	b, err := store.Open(ctx, "memory://open-by-name-b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(ctx, "j", "r1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run of memory://open-by-name-a read in memory://open-by-name-b: got %v, want ErrNotFound", err)
	}
	id, _ := b.Identity(ctx)
	if got, want := id.Location, "memory://open-by-name-b"; got != want {
		t.Errorf("Identity().Location = %q, want %q", got, want)
	}
	if _, err := store.Open(ctx, "memory://"); err == nil {
		t.Error("store.Open(memory://) succeeded, want an error naming the missing name")
	}
}

// TestClock: lease expiry follows the injected clock, not the wall clock.
func TestClock(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(Options{Now: func() time.Time { return now }})
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "a"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Expires, now.Add(time.Minute); !got.Equal(want) {
		t.Errorf("lease expires %s, want %s", got, want)
	}
	if _, err := s.AcquireLease(ctx, "j", store.Holder{ID: "b"}, time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("AcquireLease before expiry: got %v, want ErrLeaseHeld", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := s.AcquireLease(ctx, "j", store.Holder{ID: "b"}, time.Minute); err != nil {
		t.Errorf("AcquireLease after expiry on the store's clock: %v", err)
	}
}

// TestCopies: changing what was passed in or got back does not change the
// store.
func TestCopies(t *testing.T) {
	ctx := context.Background()
	s := New(Options{})
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "a"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.BeginRun(ctx, store.Run{Job: "j", RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	r.Status = store.StatusSucceeded
	r.Sources = map[string]store.Count{"src": {Files: 1}}
	c := store.Commit{Job: "j", Token: l.Token, Advance: true, Run: r,
		Sources: map[string]bookmark.SourceState{"src": {Kind: "files", Band: []bookmark.File{{Path: "a"}}}},
		Ranges:  []store.RangeRecord{{Ctx: "t", Range: []byte(`{"a":1}`)}},
		Outputs: []store.Output{{Sink: "k", Final: "f", Table: &manifest.Table{Table: "t", MergeKeys: []string{"id"}}}},
		Actions: []store.SinkAction{{Sink: "k", Mode: "overwrite_partitions", Partitions: []string{"p=1"}}},
	}
	if _, err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	// Change everything passed in.
	r.Sources["src"] = store.Count{Files: 99}
	c.Sources["src"].Band[0].Path = "changed"
	c.Ranges[0].Range[1] = 'X'
	c.Actions[0].Partitions[0] = "changed"
	c.Outputs[0].Table.MergeKeys[0] = "changed"

	got, _ := s.Run(ctx, "j", "r1")
	if got.Sources["src"].Files != 1 {
		t.Errorf("run summary after the caller changed its map: %+v, want Files 1", got.Sources)
	}
	got.Sources["src"] = store.Count{Files: 77} // change what came back
	if again, _ := s.Run(ctx, "j", "r1"); again.Sources["src"].Files != 1 {
		t.Errorf("run summary after the caller changed a returned map: %+v, want Files 1", again.Sources)
	}
	states, _ := s.SourceStates(ctx, "j")
	if p := states["src"].Band[0].Path; p != "a" {
		t.Errorf("state band path = %q, want a", p)
	}
	states["src"].Band[0].Path = "changed"
	if again, _ := s.SourceStates(ctx, "j"); again["src"].Band[0].Path != "a" {
		t.Errorf("state band path after the caller changed a returned state = %q, want a", again["src"].Band[0].Path)
	}
	for rg, err := range s.RunRanges(ctx, "j", []string{"r1"}) {
		if err != nil || string(rg.Range) != `{"a":1}` {
			t.Errorf("range = %s, %v; want {\"a\":1}", rg.Range, err)
		}
		rg.Range[1] = 'Y'
	}
	for rg := range s.RunRanges(ctx, "j", []string{"r1"}) {
		if string(rg.Range) != `{"a":1}` {
			t.Errorf("range after the caller changed a returned one = %s", rg.Range)
		}
	}
	acts, _ := s.Actions(ctx, "j", "r1")
	if acts[0].Partitions[0] != "p=1" {
		t.Errorf("partitions = %v, want [p=1]", acts[0].Partitions)
	}
	acts[0].Partitions[0] = "changed"
	if again, _ := s.Actions(ctx, "j", "r1"); again[0].Partitions[0] != "p=1" {
		t.Errorf("partitions after the caller changed returned ones = %v, want [p=1]", again[0].Partitions)
	}
	outs, _ := s.Outputs(ctx, "j", "r1")
	if outs[0].Table.MergeKeys[0] != "id" {
		t.Errorf("merge keys = %v, want [id]", outs[0].Table.MergeKeys)
	}
	outs[0].Table.MergeKeys[0] = "changed"
	if again, _ := s.Outputs(ctx, "j", "r1"); again[0].Table.MergeKeys[0] != "id" {
		t.Errorf("merge keys after the caller changed returned ones = %v, want [id]", again[0].Table.MergeKeys)
	}
}
