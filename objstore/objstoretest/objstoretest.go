// Package objstoretest is the contract every objstore.Store passes: one
// test body run against each backend (local disk, S3), so the runner can
// treat them alike.
package objstoretest

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/objstore"
)

// Run runs the contract against stores made by newStore; each call must
// return an empty store of its own.
func Run(t *testing.T, newStore func(t *testing.T) objstore.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s objstore.Store)
	}{
		{"PutStatOpen", testPutStatOpen},
		{"PutReplaces", testPutReplaces},
		{"EmptyObject", testEmptyObject},
		{"Missing", testMissing},
		{"ListOrder", testListOrder},
		{"ListPrefix", testListPrefix},
		{"ListHidden", testListHidden},
		{"ListStopsEarly", testListStopsEarly},
		{"ListSkipping", testListSkipping},
		{"Move", testMove},
		{"MoveIdempotent", testMoveIdempotent},
		{"MoveMissing", testMoveMissing},
		{"Delete", testDelete},
		{"DeletePrefix", testDeletePrefix},
		{"OddKeys", testOddKeys},
		{"CreateOnce", testCreateOnce},
		{"SwapOnce", testSwapOnce},
		{"Folders", testFolders},
		{"ListTrace", testListTrace},
		{"ReadRange", testReadRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

func put(t *testing.T, s objstore.Store, key, body string) {
	t.Helper()
	if err := s.Put(context.Background(), key, strings.NewReader(body)); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func read(t *testing.T, s objstore.Store, key string) string {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	return string(b)
}

func list(t *testing.T, s objstore.Store, prefix string) []objstore.Object {
	t.Helper()
	var objs []objstore.Object
	for o, err := range s.List(context.Background(), prefix) {
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		objs = append(objs, o)
	}
	return objs
}

func keys(t *testing.T, s objstore.Store, prefix string) []string {
	t.Helper()
	var ks []string
	for _, o := range list(t, s, prefix) {
		ks = append(ks, o.Key)
	}
	return ks
}

func wantKeys(t *testing.T, s objstore.Store, prefix string, want ...string) {
	t.Helper()
	if got := keys(t, s, prefix); !slices.Equal(got, want) {
		t.Errorf("List(%q) keys:\n got %q\nwant %q", prefix, got, want)
	}
}

func exists(t *testing.T, s objstore.Store, key string) bool {
	t.Helper()
	_, err := s.Stat(context.Background(), key)
	if errors.Is(err, objstore.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatalf("Stat(%q): %v", key, err)
	}
	return true
}

func testPutStatOpen(t *testing.T, s objstore.Store) {
	before := time.Now().Add(-2 * time.Second) // S3 truncates to the second
	put(t, s, "a/b/c.csv", "id,name\n1,x\n")
	after := time.Now().Add(2 * time.Second)
	o, err := s.Stat(context.Background(), "a/b/c.csv")
	if err != nil {
		t.Fatal(err)
	}
	if o.Key != "a/b/c.csv" || o.Size != 12 {
		t.Errorf("Stat = %+v, want key a/b/c.csv size 12", o)
	}
	if o.ModTime.Before(before) || o.ModTime.After(after) {
		t.Errorf("Stat ModTime = %v, want between %v and %v", o.ModTime, before, after)
	}
	if got := read(t, s, "a/b/c.csv"); got != "id,name\n1,x\n" {
		t.Errorf("Open read %q", got)
	}
	objs := list(t, s, "")
	if len(objs) != 1 {
		t.Fatalf("List = %+v, want one object", objs)
	}
	if l := objs[0]; l.Key != o.Key || l.Size != o.Size || !l.ModTime.Equal(o.ModTime) || l.ETag != o.ETag {
		t.Errorf("List object %+v differs from Stat %+v", l, o)
	}
	if strings.Contains(o.ETag, `"`) {
		t.Errorf("ETag %q has quotes", o.ETag)
	}
}

func testPutReplaces(t *testing.T, s objstore.Store) {
	put(t, s, "k", "old")
	o1, _ := s.Stat(context.Background(), "k")
	put(t, s, "k", "newer")
	o2, err := s.Stat(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "k"); got != "newer" {
		t.Errorf("after replacing: read %q, want %q", got, "newer")
	}
	if o2.Size != 5 {
		t.Errorf("size %d, want 5", o2.Size)
	}
	if o1.ETag != "" && o1.ETag == o2.ETag {
		t.Errorf("ETag unchanged (%q) after new content", o2.ETag)
	}
	wantKeys(t, s, "", "k") // no temporary object left visible
}

func testEmptyObject(t *testing.T, s objstore.Store) {
	put(t, s, "empty.csv", "")
	o, err := s.Stat(context.Background(), "empty.csv")
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != 0 {
		t.Errorf("size %d, want 0", o.Size)
	}
	if got := read(t, s, "empty.csv"); got != "" {
		t.Errorf("read %q, want empty", got)
	}
	wantKeys(t, s, "", "empty.csv")
}

func testMissing(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	if _, err := s.Stat(ctx, "nope/x"); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("Stat of a missing object: %v, want ErrNotExist", err)
	}
	if _, err := s.Open(ctx, "nope/x"); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("Open of a missing object: %v, want ErrNotExist", err)
	}
	wantKeys(t, s, "")
	wantKeys(t, s, "nope/")
}

func testListOrder(t *testing.T, s objstore.Store) {
	// Byte order, not walk order: '-' (0x2d) and '.' sort before '/' (0x2f),
	// '0' after it; upper case before lower case; UTF-8 by bytes.
	// (No key is also a folder of another: a disk cannot hold both.)
	ks := []string{"a-b", "a0", "a/a/z", "a.b", "B", "b", "é", "z/y/x", "a/b0", "a/b/c"}
	for _, k := range ks {
		put(t, s, k, k)
	}
	want := slices.Clone(ks)
	slices.Sort(want)
	wantKeys(t, s, "", want...)
	for _, o := range list(t, s, "") {
		if o.Size != int64(len(o.Key)) {
			t.Errorf("%s: size %d, want %d", o.Key, o.Size, len(o.Key))
		}
	}
}

func testListPrefix(t *testing.T, s objstore.Store) {
	for _, k := range []string{"2026-11-28/a.csv", "2026-11-29/a.csv", "2026-11-29/b.csv", "2026-11-3/a.csv", "2026-12-01/a.csv", "other"} {
		put(t, s, k, "x")
	}
	wantKeys(t, s, "2026-11-29/", "2026-11-29/a.csv", "2026-11-29/b.csv")
	// A prefix may end inside a name.
	wantKeys(t, s, "2026-11-", "2026-11-28/a.csv", "2026-11-29/a.csv", "2026-11-29/b.csv", "2026-11-3/a.csv")
	wantKeys(t, s, "2026-11-29/b", "2026-11-29/b.csv")
	wantKeys(t, s, "2027")
}

func testListHidden(t *testing.T, s objstore.Store) {
	for _, k := range []string{
		"data/a.csv", "data/_SUCCESS", "data/.a.csv.crc", "data/_tmp/b.csv", "data/.hidden/c.csv",
		"_tidemark/staging/r1/data/part-0.parquet", "_tidemark/rejects/r1/x.csv", ".tmp-x",
		"p=_x/d.csv", "z.csv",
	} {
		put(t, s, k, "x")
	}
	// Only a segment's first byte counts: "p=_x" is not hidden.
	wantKeys(t, s, "", "data/a.csv", "p=_x/d.csv", "z.csv")
	wantKeys(t, s, "data/", "data/a.csv")
	// A prefix that names a hidden folder lists it.
	wantKeys(t, s, "_tidemark/", "_tidemark/rejects/r1/x.csv", "_tidemark/staging/r1/data/part-0.parquet")
	wantKeys(t, s, "_tidemark/staging/", "_tidemark/staging/r1/data/part-0.parquet")
	wantKeys(t, s, "data/_tmp/", "data/_tmp/b.csv")
	wantKeys(t, s, "data/_SUCCESS", "data/_SUCCESS")
	// Naming part of a hidden name is not naming it.
	wantKeys(t, s, "_tide")
	wantKeys(t, s, "data/_")
}

// testListSkipping: a store that can skip marked folders leaves out every
// folder below the root that holds the marker (a file or a folder), before
// and after it in key order, and never the root.
func testListSkipping(t *testing.T, s objstore.Store) {
	fs, ok := s.(objstore.FolderSkipper)
	if !ok {
		t.Skip("the store cannot skip marked folders")
	}
	for _, k := range []string{
		"top.csv", "_tidemark/owner.json", "2024/a.csv",
		"nested/2024/part-1.parquet", "nested/_tidemark/owner.json", "nested/zz/part-2.parquet",
		"nested/sub/_tidemark/x", "nested/sub/part-3.parquet",
		"deep/A/b.csv", "deep/A/_tidemark", "deep/b.csv",
		"other/_tidemarkx/y.csv", "other/c.csv", "x_tidemark/d.csv",
	} {
		put(t, s, k, "x")
	}
	var got, skipped []string
	for o, err := range fs.ListSkipping(context.Background(), "_tidemark", func(dir string, o objstore.Object) {
		skipped = append(skipped, dir+": "+o.Key)
	}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Key)
	}
	want := []string{"2024/a.csv", "deep/b.csv", "other/c.csv", "top.csv", "x_tidemark/d.csv"}
	if !slices.Equal(got, want) {
		t.Errorf("ListSkipping yielded %q, want %q", got, want)
	}
	wantSkipped := []string{"deep/A: deep/A/b.csv", "nested: nested/2024/part-1.parquet",
		"nested: nested/sub/part-3.parquet", "nested: nested/zz/part-2.parquet"}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("ListSkipping skipped %q, want %q", skipped, wantSkipped)
	}
}

func testListStopsEarly(t *testing.T, s objstore.Store) {
	for _, k := range []string{"a", "b", "c"} {
		put(t, s, k, k)
	}
	var got []string
	for o, err := range s.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Key)
		if len(got) == 2 {
			break
		}
	}
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %q", got)
	}
}

func testMove(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	put(t, s, "_tidemark/staging/r1/data/p=1/f.parquet", "payload")
	put(t, s, "p=1/part-r1-00000.parquet", "stale")
	if err := s.Move(ctx, "_tidemark/staging/r1/data/p=1/f.parquet", "p=1/part-r1-00000.parquet"); err != nil {
		t.Fatal(err)
	}
	if exists(t, s, "_tidemark/staging/r1/data/p=1/f.parquet") {
		t.Error("source still exists after Move")
	}
	if got := read(t, s, "p=1/part-r1-00000.parquet"); got != "payload" {
		t.Errorf("destination holds %q, want the moved payload", got)
	}
	if err := s.Move(ctx, "p=1/part-r1-00000.parquet", "q/new/deep/name"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "", "q/new/deep/name")
}

func testMoveIdempotent(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	put(t, s, "from", "x")
	if err := s.Move(ctx, "from", "to"); err != nil {
		t.Fatal(err)
	}
	// A roll-forward repeats the move: from is gone, to exists.
	if err := s.Move(ctx, "from", "to"); err != nil {
		t.Errorf("repeated Move: %v, want nil", err)
	}
	if got := read(t, s, "to"); got != "x" {
		t.Errorf("to holds %q", got)
	}
}

func testMoveMissing(t *testing.T, s objstore.Store) {
	err := s.Move(context.Background(), "nothing", "neither")
	if !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("Move with neither side present: %v, want ErrNotExist", err)
	}
}

func testDelete(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	put(t, s, "a/b/c", "x")
	put(t, s, "a/d", "y")
	if err := s.Delete(ctx, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a/b/c"); err != nil {
		t.Errorf("deleting a missing object: %v, want nil", err)
	}
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Errorf("deleting a missing object: %v, want nil", err)
	}
	wantKeys(t, s, "", "a/d")
}

func testDeletePrefix(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	for _, k := range []string{"_tidemark/staging/r1/data/a", "_tidemark/staging/r1/rejects/_x/b", "_tidemark/staging/r10/c",
		"_tidemark/staging/r2/d", "keep/e", "a/b/x", "a/b/y/z", "a/bc", "f/g", "f/gh"} {
		put(t, s, k, "x")
	}
	if err := s.DeletePrefix(ctx, "_tidemark/staging/r1/"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "_tidemark/", "_tidemark/staging/r10/c", "_tidemark/staging/r2/d")
	// Without a trailing slash the prefix still means a folder (or file).
	if err := s.DeletePrefix(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "a/", "a/bc")
	if err := s.DeletePrefix(ctx, "f/g"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, s, "f/", "f/gh")
	if err := s.DeletePrefix(ctx, "missing/"); err != nil {
		t.Errorf("DeletePrefix of nothing: %v", err)
	}
	if err := s.DeletePrefix(ctx, ""); err == nil {
		t.Error("DeletePrefix(\"\") deleted the whole store, want a refusal")
	}
	wantKeys(t, s, "", "a/bc", "f/gh", "keep/e")
}

func testOddKeys(t *testing.T, s objstore.Store) {
	ctx := context.Background()
	// Hive partition values and user file names carry spaces, '=', '+', '%'
	// and non-ASCII; copies (Move) must escape them.
	odd := []string{"product=Widget A/part 1.csv", "p=a+b/q=50%/x.csv", "ünï/cödé #1.csv"}
	for i, k := range odd {
		put(t, s, k, strings.Repeat("x", i+1))
		to := "moved/" + k
		if err := s.Move(ctx, k, to); err != nil {
			t.Fatalf("Move(%q): %v", k, err)
		}
		if got := read(t, s, to); got != strings.Repeat("x", i+1) {
			t.Errorf("%q holds %q", to, got)
		}
	}
	want := []string{}
	for _, k := range odd {
		want = append(want, "moved/"+k)
	}
	slices.Sort(want)
	wantKeys(t, s, "", want...)
}

// testCreateOnce: of creators racing for one key exactly one wins, the
// others and a later one get ErrExists, and the winner's object is whole.
func testCreateOnce(t *testing.T, s objstore.Store) {
	c, ok := s.(objstore.Creator)
	if !ok {
		t.Skip("the store cannot create conditionally")
	}
	const racers = 8
	errs := make(chan error, racers)
	for i := range racers {
		go func() {
			errs <- c.Create(context.Background(), "_meta/owner.json", strings.NewReader(strings.Repeat(string(rune('a'+i)), 100)))
		}()
	}
	won := 0
	for range racers {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, objstore.ErrExists):
			t.Errorf("Create racing: %v, want nil or ErrExists", err)
		}
	}
	if won != 1 {
		t.Errorf("%d creators won, want exactly 1", won)
	}
	got := read(t, s, "_meta/owner.json")
	if len(got) != 100 || strings.Count(got, got[:1]) != 100 {
		t.Errorf("the created object is %q, want one creator's 100 bytes", got)
	}
	if err := c.Create(context.Background(), "_meta/owner.json", strings.NewReader("late")); !errors.Is(err, objstore.ErrExists) {
		t.Errorf("Create of an existing key: %v, want ErrExists", err)
	}
}

// testSwapOnce: of several swaps from one version exactly one wins, the
// others get ErrStale; a swap from a version that is gone, or of a key
// that is gone, is ErrStale too.
func testSwapOnce(t *testing.T, s objstore.Store) {
	sw, ok := s.(objstore.Swapper)
	if !ok {
		t.Skip("the store cannot replace conditionally")
	}
	ctx := context.Background()
	put(t, s, "_meta/owner.json", "v0")
	data, v0, err := sw.ReadVersion(ctx, "_meta/owner.json")
	if err != nil || string(data) != "v0" {
		t.Fatalf("ReadVersion: %q, %v; want v0", data, err)
	}
	const racers = 8
	errs := make(chan error, racers)
	for i := range racers {
		go func() { errs <- sw.Swap(ctx, "_meta/owner.json", []byte(strings.Repeat(string(rune('a'+i)), 100)), v0) }()
	}
	won := 0
	for range racers {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, objstore.ErrStale):
			t.Errorf("Swap racing: %v, want nil or ErrStale", err)
		}
	}
	if won != 1 {
		t.Errorf("%d swappers won, want exactly 1", won)
	}
	got := read(t, s, "_meta/owner.json")
	if len(got) != 100 || strings.Count(got, got[:1]) != 100 {
		t.Errorf("the swapped object is %q, want one swapper's 100 bytes", got)
	}
	if err := sw.Swap(ctx, "_meta/owner.json", []byte("late"), v0); !errors.Is(err, objstore.ErrStale) {
		t.Errorf("Swap from a replaced version: %v, want ErrStale", err)
	}
	_, v1, err := sw.ReadVersion(ctx, "_meta/owner.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Swap(ctx, "_meta/owner.json", []byte("v2"), v1); err != nil {
		t.Errorf("Swap from the current version: %v", err)
	}
	if got := read(t, s, "_meta/owner.json"); got != "v2" {
		t.Errorf("after the swap: %q, want v2", got)
	}
	if err := s.Delete(ctx, "_meta/owner.json"); err != nil {
		t.Fatal(err)
	}
	if err := sw.Swap(ctx, "_meta/owner.json", []byte("v3"), v1); !errors.Is(err, objstore.ErrStale) {
		t.Errorf("Swap of a deleted key: %v, want ErrStale", err)
	}
	if _, _, err := sw.ReadVersion(ctx, "_meta/owner.json"); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("ReadVersion of a deleted key: %v, want ErrNotExist", err)
	}
}

// testFolders: the folders right under a prefix are listed, those whose
// objects are deeper down too; a missing prefix lists nothing.
func testFolders(t *testing.T, s objstore.Store) {
	fl, ok := s.(objstore.FolderLister)
	if !ok {
		t.Skip("the store cannot list folders")
	}
	put(t, s, "_st/run1/data/a.csv", "x")
	put(t, s, "_st/run2/b.csv", "x")
	put(t, s, "_st/file.csv", "x")
	var got []string
	for name, err := range fl.Folders(context.Background(), "_st/") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "run1,run2" {
		t.Errorf("Folders(_st/): got %v, want [run1 run2]", got)
	}
	for name, err := range fl.Folders(context.Background(), "_none/") {
		t.Errorf("Folders of a missing prefix: got %q, %v", name, err)
	}
}

// testListTrace: a listing reports through the context's ListTrace only
// what it must (plain objects are never "skipped"), the server's clock at
// most once and close to this machine's (the tests run the server here),
// and a store that can tell a missing root says its root exists.
func testListTrace(t *testing.T, s objstore.Store) {
	put(t, s, "a/b.csv", "x")
	put(t, s, "c.csv", "y")
	var skipped []string
	var times []time.Time
	ctx := objstore.WithListTrace(context.Background(), &objstore.ListTrace{
		Skipped:    func(key, why string) { skipped = append(skipped, key+": "+why) },
		ServerTime: func(at time.Time) { times = append(times, at) },
	})
	var got []string
	for o, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Key)
	}
	if !slices.Equal(got, []string{"a/b.csv", "c.csv"}) {
		t.Errorf("List with a trace: keys %q", got)
	}
	if len(skipped) > 0 {
		t.Errorf("List reported plain objects as skipped: %q", skipped)
	}
	if len(times) > 1 {
		t.Errorf("List reported the server time %d times, want at most once", len(times))
	}
	for _, at := range times {
		if d := time.Since(at); d > time.Minute || d < -time.Minute {
			t.Errorf("server time %v is %v from this machine's clock", at, d)
		}
	}
	if rc, ok := s.(objstore.RootChecker); ok {
		if err := rc.CheckRoot(context.Background()); err != nil {
			t.Errorf("CheckRoot of a store holding objects: %v", err)
		}
	}
}
