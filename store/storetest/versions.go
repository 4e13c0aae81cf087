package storetest

import (
	"reflect"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// testVersions: Versions lists commits, rewinds and resets newest first
// with the run each holds and who asked; Limit and Before page them.
func testVersions(t *testing.T, s store.Store) {
	ctx := t.Context()
	if vs, err := s.Versions(ctx, job, store.VersionQuery{}); err != nil || len(vs) != 0 {
		t.Fatalf("Versions of an unknown job: got %v, %v; want none", vs, err)
	}
	l := acquire(t, s, job, "r")
	advance(t, s, l, "r1", 0, map[string]bookmark.SourceState{src: state("fp", 1)}, recs(src, file("a", 1)), nil)
	mustCommit(t, s, commitOf(t, s, l, "r2", bookmark.ModePause, 1)) // no version
	advance(t, s, l, "r3", 1, map[string]bookmark.SourceState{src: state("fp", 2)}, recs(src, file("b", 1)), nil)
	if _, err := s.Reset(ctx, job, l.Token, "r1", "cli alice@host"); err != nil {
		t.Fatal(err)
	}
	advance(t, s, l, "r4", 3, map[string]bookmark.SourceState{src: state("fp", 3)}, recs(src, file("c", 1)), nil)
	if _, err := s.Reset(ctx, job, l.Token, "", "serve 127.0.0.1:1 bob"); err != nil {
		t.Fatal(err)
	}

	all, err := s.Versions(ctx, job, store.VersionQuery{})
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	type row struct {
		Version         int64
		Kind, RunID, By string
	}
	var got []row
	for _, v := range all {
		got = append(got, row{v.Version, v.Kind, v.RunID, v.By})
		if v.At.IsZero() {
			t.Errorf("Versions: version %d has no time", v.Version)
		}
	}
	want := []row{
		{5, store.KindReset, "", "serve 127.0.0.1:1 bob"},
		{4, store.KindCommit, "r4", ""},
		{3, store.KindRewind, "r1", "cli alice@host"},
		{2, store.KindCommit, "r3", ""},
		{1, store.KindCommit, "r1", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Versions:\n got %+v\nwant %+v", got, want)
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.After(all[i-1].At) {
			t.Errorf("Versions: version %d at %v is after version %d at %v", all[i].Version, all[i].At, all[i-1].Version, all[i-1].At)
		}
	}

	page, err := s.Versions(ctx, job, store.VersionQuery{Limit: 2})
	if err != nil || len(page) != 2 || page[0].Version != 5 || page[1].Version != 4 {
		t.Errorf("Versions(Limit 2): got %+v, %v; want versions 5, 4", page, err)
	}
	page, err = s.Versions(ctx, job, store.VersionQuery{Limit: 2, Before: 4})
	if err != nil || len(page) != 2 || page[0].Version != 3 || page[1].Version != 2 {
		t.Errorf("Versions(Limit 2, Before 4): got %+v, %v; want versions 3, 2", page, err)
	}
	page, err = s.Versions(ctx, job, store.VersionQuery{Before: 2})
	if err != nil || len(page) != 1 || page[0].Version != 1 {
		t.Errorf("Versions(Before 2): got %+v, %v; want version 1", page, err)
	}
}

// testSourceStatesAt: each version's states are what its commit wrote, a
// rewind's are its target's, a reset's are empty, and an unknown version
// is ErrNotFound.
func testSourceStatesAt(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	v1 := map[string]bookmark.SourceState{src: state("fp", 1)}
	v2 := map[string]bookmark.SourceState{src: state("fp", 2), src2: state("fp2", 1)}
	advance(t, s, l, "r1", 0, v1, recs(src, file("a", 1)), nil)
	advance(t, s, l, "r2", 1, v2, recs(src, file("b", 1)), nil)
	mustReset(t, s, l, "r1", "r2") // version 3
	mustReset(t, s, l, "", "r1")   // version 4

	for _, tc := range []struct {
		version int64
		want    map[string]bookmark.SourceState
	}{{1, v1}, {2, v2}, {3, v1}, {4, map[string]bookmark.SourceState{}}} {
		got, err := s.SourceStatesAt(ctx, job, tc.version)
		if err != nil {
			t.Fatalf("SourceStatesAt(%d): %v", tc.version, err)
		}
		if got == nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SourceStatesAt(%d):\n got %+v\nwant %+v", tc.version, got, tc.want)
		}
	}
	for _, v := range []int64{0, 5, -1} {
		_, err := s.SourceStatesAt(ctx, job, v)
		wantErr(t, "SourceStatesAt of a version the job does not have", err, store.ErrNotFound)
	}
	_, err := s.SourceStatesAt(ctx, otherJob, 1)
	wantErr(t, "SourceStatesAt of an unknown job", err, store.ErrNotFound)
}
