package objcore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// TestCompaction: over many commits that add files and supersede older
// ones, Files equals an oracle's set, the live segments stay few, and a
// read of the set costs the head, the version and one GET per segment.
func TestCompaction(t *testing.T) {
	f := &countingBackend{}
	s := openMem(t, f)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	oracle := map[string]bookmark.File{}
	next := 0
	for i := range 60 {
		r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: fmt.Sprintf("r%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		c := store.Commit{Job: "j", Token: l.Token, Advance: true, BaseVersion: int64(i), Run: r,
			Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}}}
		for range 1 + rng.IntN(8) {
			f := bookmark.File{Path: fmt.Sprintf("day=%02d/f-%05d.csv", next%7, next), Size: int64(next)}
			next++
			c.Added = append(c.Added, store.FileRecord{Ctx: "src", File: f})
			oracle[f.Path] = f
		}
		if len(oracle) > 10 && rng.IntN(2) == 0 { // a modified file, read again
			paths := slices.Sorted(maps.Keys(oracle))
			old := oracle[paths[rng.IntN(len(paths))]]
			if !slices.ContainsFunc(c.Added, func(a store.FileRecord) bool { return a.File.Path == old.Path }) {
				nf := old
				nf.Size += 1000
				c.Superseded = append(c.Superseded, store.FileRecord{Ctx: "src", File: old})
				c.Added = append(c.Added, store.FileRecord{Ctx: "src", File: nf})
				oracle[old.Path] = nf
			}
		}
		if len(oracle) > 10 && rng.IntN(3) == 0 { // superseded, not read again
			paths := slices.Sorted(maps.Keys(oracle))
			old := oracle[paths[rng.IntN(len(paths))]]
			if !slices.ContainsFunc(c.Added, func(a store.FileRecord) bool { return a.File.Path == old.Path }) {
				c.Superseded = append(c.Superseded, store.FileRecord{Ctx: "src", File: old})
				delete(oracle, old.Path)
			}
		}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	_, v, err := s.headVersion(ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(v.Files["src"]); n > maxSegments {
		t.Errorf("%d live segments after 60 commits, want at most %d", n, maxSegments)
	}
	before := f.reads.Load()
	var got []bookmark.File
	for file, err := range s.Files(ctx, "j", "src") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, file)
	}
	if gets := f.reads.Load() - before; gets > int64(2+len(v.Files["src"])) {
		t.Errorf("reading the file set took %d GETs, want at most %d (head, version, %d segments)", gets, 2+len(v.Files["src"]), len(v.Files["src"]))
	}
	want := make([]bookmark.File, 0, len(oracle))
	for _, p := range slices.Sorted(maps.Keys(oracle)) {
		want = append(want, oracle[p])
	}
	if !slices.Equal(got, want) {
		t.Errorf("Files after 60 commits: %d files, want %d (the oracle's)", len(got), len(want))
	}
}

// TestSegmentCodec: a segment decodes to what was encoded; a cut one is
// an error, not a shorter set.
func TestSegmentCodec(t *testing.T) {
	w := newSegWriter()
	var want []entry
	for i := range 1000 {
		e := entry{File: bookmark.File{Path: fmt.Sprintf("a/b/%06d.csv", i), Size: int64(i) - 500, MTime: int64(i) << 40,
			ETag: fmt.Sprintf("%032x", i)}, Run: fmt.Sprintf("run-%d", i/100), Tomb: i%17 == 0}
		if err := w.add(e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	if err := w.add(entry{File: bookmark.File{Path: "a"}}); err == nil {
		t.Error("adding a path out of order succeeded")
	}
	b, err := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) ([]entry, error) {
		r, err := newSegReader(nopCloser{bytesReader(b)}, "test")
		if err != nil {
			return nil, err
		}
		defer r.close()
		var got []entry
		for {
			e, ok, err := r.next()
			if err != nil || !ok {
				return got, err
			}
			got = append(got, e)
		}
	}
	got, err := read(b)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("decoded %d entries (%v), want the %d encoded", len(got), err, len(want))
	}
	if _, err := read(b[:len(b)/2]); err == nil {
		t.Error("a cut segment decoded without error")
	}
}
