// Package backendtest is the suite every objcore.Backend passes: the
// guarantees written on the interface (conditional writes, read after
// write, listing order, the clock), tested once for every backend.
package backendtest

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store/objcore"
)

// Run runs the suite; open returns a new, empty backend.
func Run(t *testing.T, open func(t *testing.T) objcore.Backend) {
	t.Run("Conditions", func(t *testing.T) { testConditions(t, open(t)) })
	t.Run("Race", func(t *testing.T) { testRace(t, open(t)) })
	t.Run("List", func(t *testing.T) { testList(t, open(t)) })
	t.Run("Clock", func(t *testing.T) { testClock(t, open(t)) })
}

func testConditions(t *testing.T, b objcore.Backend) {
	ctx := t.Context()
	if _, err := b.Get(ctx, "a/x"); !errors.Is(err, objcore.ErrMissing) {
		t.Errorf("Get of a missing object: %v, want ErrMissing", err)
	}
	if _, err := b.Stat(ctx, "a/x"); !errors.Is(err, objcore.ErrMissing) {
		t.Errorf("Stat of a missing object: %v, want ErrMissing", err)
	}
	if _, err := b.Open(ctx, "a/x"); !errors.Is(err, objcore.ErrMissing) {
		t.Errorf("Open of a missing object: %v, want ErrMissing", err)
	}
	_, err := b.Put(ctx, "a/x", []byte("one"), objcore.Cond{IfMatch: `"nope"`})
	if !errors.Is(err, objcore.ErrPrecondition) && !errors.Is(err, objcore.ErrMissing) {
		t.Errorf("Put If-Match of a missing object: %v, want ErrPrecondition or ErrMissing", err)
	}
	e1, err := b.Put(ctx, "a/x", []byte("one"), objcore.Cond{IfNoneMatch: true})
	if err != nil {
		t.Fatalf("Put If-None-Match of a missing object: %v", err)
	}
	if _, err := b.Put(ctx, "a/x", []byte("two"), objcore.Cond{IfNoneMatch: true}); !errors.Is(err, objcore.ErrPrecondition) {
		t.Errorf("Put If-None-Match of an existing object: %v, want ErrPrecondition", err)
	}
	wantObject(t, b, "a/x", "one", e1)
	e2, err := b.Put(ctx, "a/x", []byte("two"), objcore.Cond{IfMatch: e1})
	if err != nil {
		t.Fatalf("Put If-Match of the current ETag: %v", err)
	}
	if e2 == e1 {
		t.Errorf("ETag after a write of other bytes = %s, unchanged", e2)
	}
	if _, err := b.Put(ctx, "a/x", []byte("three"), objcore.Cond{IfMatch: e1}); !errors.Is(err, objcore.ErrPrecondition) {
		t.Errorf("Put If-Match of a stale ETag: %v, want ErrPrecondition", err)
	}
	wantObject(t, b, "a/x", "two", e2)
	if _, err := b.Put(ctx, "a/x", []byte("four"), objcore.Cond{}); err != nil {
		t.Fatalf("unconditional Put: %v", err)
	}
	wantObject(t, b, "a/x", "four", "")
	if err := b.Delete(ctx, "a/x"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := b.Get(ctx, "a/x"); !errors.Is(err, objcore.ErrMissing) {
		t.Errorf("Get after Delete: %v, want ErrMissing", err)
	}
	if err := b.Delete(ctx, "a/x"); err != nil {
		t.Errorf("Delete of a missing object: %v, want nil", err)
	}
	if _, err := b.Put(ctx, "a/empty", nil, objcore.Cond{}); err != nil {
		t.Fatalf("Put of no bytes: %v", err)
	}
	wantObject(t, b, "a/empty", "", "")
}

// wantObject checks the object at key through Get, Stat and Open (etag ""
// : any).
func wantObject(t *testing.T, b objcore.Backend, key, body, etag string) {
	t.Helper()
	ctx := t.Context()
	o, err := b.Get(ctx, key)
	if err != nil || string(o.Body) != body || etag != "" && o.ETag != etag {
		t.Errorf("Get(%s) = %q %s, %v; want %q %s", key, o.Body, o.ETag, err, body, etag)
	}
	if tag, err := b.Stat(ctx, key); err != nil || tag != o.ETag {
		t.Errorf("Stat(%s) = %s, %v; want %s", key, tag, err, o.ETag)
	}
	r, err := b.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer r.Close()
	if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, []byte(body)) {
		t.Errorf("Open(%s) read %q, %v; want %q", key, got, err, body)
	}
}

// testRace: of writers racing to swap one object from the same ETag,
// exactly one wins.
func testRace(t *testing.T, b objcore.Backend) {
	ctx := t.Context()
	e, err := b.Put(ctx, "race", []byte("0"), objcore.Cond{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = b.Put(ctx, "race", []byte{byte('a' + i)}, objcore.Cond{IfMatch: e})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, objcore.ErrPrecondition):
			t.Errorf("racing Put: %v, want nil or ErrPrecondition", err)
		}
	}
	if won != 1 {
		t.Errorf("%d racing swaps won, want 1", won)
	}
}

// testList: keys in byte order, below a prefix, after startAfter, with
// their sizes; folders right below a prefix. Everything is under l/ (a
// backend may hold a store's identity at its root).
func testList(t *testing.T, b objcore.Backend) {
	ctx := t.Context()
	keys := []string{"l/jobs/a%2Fb/head.json", "l/jobs/a-b/head.json", "l/jobs/a/head.json", "l/jobs/a/seqs/2", "l/jobs/a/seqs/1",
		"l/jobs/b/runs/r.json", "l/jobsx", "l/top.json"}
	for _, k := range keys {
		if _, err := b.Put(ctx, k, []byte(k), objcore.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix, after string, limit int) []string {
		var got []string
		err := b.List(ctx, prefix, after, func(e objcore.Entry) (bool, error) {
			if e.Size != int64(len(e.Key)) {
				t.Errorf("List: %s has size %d, want %d", e.Key, e.Size, len(e.Key))
			}
			got = append(got, e.Key)
			return limit == 0 || len(got) < limit, nil
		})
		if err != nil {
			t.Fatalf("List(%q, %q): %v", prefix, after, err)
		}
		return got
	}
	want := slices.Sorted(slices.Values(keys))
	if got := list("l/", "", 0); !slices.Equal(got, want) {
		t.Errorf("List(l/) = %q, want %q", got, want)
	}
	if got, want := list("l/jobs/a/", "", 0), []string{"l/jobs/a/head.json", "l/jobs/a/seqs/1", "l/jobs/a/seqs/2"}; !slices.Equal(got, want) {
		t.Errorf("List(l/jobs/a/) = %q, want %q", got, want)
	}
	if got, want := list("l/jobs/a/", "l/jobs/a/seqs/1", 0), []string{"l/jobs/a/seqs/2"}; !slices.Equal(got, want) {
		t.Errorf("List(l/jobs/a/, after l/jobs/a/seqs/1) = %q, want %q", got, want)
	}
	if got, want := list("l/jobs/", "", 2), []string{"l/jobs/a%2Fb/head.json", "l/jobs/a-b/head.json"}; !slices.Equal(got, want) {
		t.Errorf("List(l/jobs/) stopped after 2 = %q, want %q", got, want)
	}
	dirs, err := b.Folders(ctx, "l/jobs/")
	if want := []string{"a%2Fb", "a-b", "a", "b"}; err != nil || !slices.Equal(dirs, want) {
		t.Errorf("Folders(l/jobs/) = %q, %v; want %q", dirs, err, want)
	}
	if dirs, err := b.Folders(ctx, "l/none/"); err != nil || len(dirs) != 0 {
		t.Errorf("Folders(l/none/) = %q, %v; want none", dirs, err)
	}
}

// testClock: Now does not go back, a time past is expired and one an hour
// ahead is not.
func testClock(t *testing.T, b objcore.Backend) {
	ctx := t.Context()
	n1, err := b.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := b.Now(ctx)
	if err != nil || n2.Before(n1) {
		t.Errorf("Now = %s then %s, %v; want it not to go back", n1, n2, err)
	}
	if gone, err := b.Expired(ctx, n1.Add(-time.Minute)); err != nil || !gone {
		t.Errorf("Expired(a minute before Now) = %v, %v; want true", gone, err)
	}
	if gone, err := b.Expired(ctx, n2.Add(time.Hour)); err != nil || gone {
		t.Errorf("Expired(an hour after Now) = %v, %v; want false", gone, err)
	}
}
