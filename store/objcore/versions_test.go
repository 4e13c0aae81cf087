package objcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// failingHeads fails every write of a job's head while on, as a dropped
// connection would.
type failingHeads struct {
	Backend
	on atomic.Bool
}

func (f *failingHeads) Put(ctx context.Context, key string, body []byte, c Cond) (string, error) {
	if f.on.Load() && strings.HasSuffix(key, "/head.json") {
		return "", errors.New("writing " + key + ": connection reset (injected)")
	}
	return f.Backend.Put(ctx, key, body, c)
}

// fingerprints is a history of n versions whose states are fingerprinted
// by name and version, with a run per version.
func fingerprints(name string, n int64) store.JobHistory {
	h := store.JobHistory{Job: "j"}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v := int64(1); v <= n; v++ {
		id := fmt.Sprintf("%s-r%d", name, v)
		h.Runs = append(h.Runs, store.RunHistory{Run: store.Run{Job: "j", RunID: id, Seq: v, Attempt: 1,
			Mode: bookmark.ModeEnable, Status: store.StatusSucceeded, StartedAt: at, FinishedAt: at, Version: v}})
		h.Versions = append(h.Versions, store.VersionStates{
			Version: store.Version{Version: v, Kind: store.KindCommit, RunID: id, At: at},
			States:  map[string]bookmark.SourceState{"src": {Kind: bookmark.KindFiles, Fingerprint: fmt.Sprintf("%s-%d", name, v)}},
		})
	}
	return h
}

// TestVersionsSharedNumbers: an import that failed at its last write (the
// head) left versions 1-5 unreachable under the same numbers as the
// versions of the import that then succeeded; two commits follow. Each
// version read by its number, and the listing, are the head's chain's,
// never the lost import's.
func TestVersionsSharedNumbers(t *testing.T) {
	ctx := t.Context()
	b := &failingHeads{Backend: NewMemBackend("memory://"+t.Name(), nil)}
	s, err := Open(ctx, b, Options{Kind: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	b.on.Store(true)
	if err := s.ImportJob(ctx, fingerprints("lost", 5)); err == nil {
		t.Fatal("an import whose head write failed succeeded")
	}
	b.on.Store(false)
	if err := s.ImportJob(ctx, fingerprints("won", 5)); err != nil {
		t.Fatal(err)
	}
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for v := int64(6); v <= 7; v++ {
		r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: fmt.Sprintf("won-r%d", v)})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		_, err = s.Commit(ctx, store.Commit{Job: "j", Token: l.Token, Advance: true, BaseVersion: v - 1, Run: r,
			Sources: map[string]bookmark.SourceState{"src": {Kind: bookmark.KindFiles, Fingerprint: fmt.Sprintf("won-%d", v)}}})
		if err != nil {
			t.Fatal(err)
		}
	}

	for v := int64(1); v <= 7; v++ {
		fresh, err := Open(ctx, b, Options{Kind: "memory", MustExist: true})
		if err != nil {
			t.Fatal(err)
		}
		states, err := fresh.SourceStatesAt(ctx, "j", v)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := states["src"].Fingerprint, fmt.Sprintf("won-%d", v); got != want {
			t.Errorf("SourceStatesAt(%d): fingerprint %q, want %q", v, got, want)
		}
		vs, err := fresh.Versions(ctx, "j", store.VersionQuery{Before: v + 1, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range vs {
			if want := fmt.Sprintf("won-r%d", v-int64(i)); got.Version != v-int64(i) || got.RunID != want {
				t.Errorf("Versions(before %d)[%d] = version %d of run %s, want version %d of run %s",
					v+1, i, got.Version, got.RunID, v-int64(i), want)
			}
		}
		if want := min(2, int(v)); len(vs) != want {
			t.Errorf("Versions(before %d, limit 2) = %d versions, want %d", v+1, len(vs), want)
		}
	}
	for _, v := range []int64{0, 8} {
		if _, err := s.SourceStatesAt(ctx, "j", v); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SourceStatesAt(%d) = %v, want store.ErrNotFound", v, err)
		}
	}
}

// TestVersionsGap: a chain whose numbers have a gap (none this package
// writes) still reads as it did: the listing and each version by number
// come from a walk of the whole chain, and a number the chain lacks is
// not found.
func TestVersionsGap(t *testing.T) {
	ctx := t.Context()
	s := openMem(t, nil)
	if err := s.ImportJob(ctx, fingerprints("won", 3)); err != nil {
		t.Fatal(err)
	}
	h, _, err := s.readHead(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	v := versionObj{Version: 10, Kind: store.KindCommit, RunID: "won-r3", Prev: h.VersionKey,
		States: map[string]json.RawMessage{"src": json.RawMessage(`{"kind":"files","fingerprint":"won-10"}`)}}
	key := newVersionKey("j", 10)
	if err := s.createJSON(ctx, key, v); err != nil {
		t.Fatal(err)
	}
	if _, err := s.updateHead(ctx, "j", func(h *headObj) error {
		h.Version, h.VersionKey = 10, key
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Versions(ctx, "j", store.VersionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, v := range vs {
		got = append(got, v.Version)
	}
	if want := []int64{10, 3, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("Versions = %v, want %v", got, want)
	}
	if vs, err := s.Versions(ctx, "j", store.VersionQuery{Before: 10, Limit: 1}); err != nil || len(vs) != 1 || vs[0].Version != 3 {
		t.Errorf("Versions(before 10, limit 1) = %+v, %v; want version 3", vs, err)
	}
	for v, want := range map[int64]string{10: "won-10", 3: "won-3", 1: "won-1"} {
		states, err := s.SourceStatesAt(ctx, "j", v)
		if err != nil || states["src"].Fingerprint != want {
			t.Errorf("SourceStatesAt(%d) = %v, %v; want fingerprint %s", v, states, err, want)
		}
	}
	if _, err := s.SourceStatesAt(ctx, "j", 5); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SourceStatesAt(5) = %v, want store.ErrNotFound", err)
	}
}
