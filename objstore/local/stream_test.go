package local_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/objstore/local"
)

// TestListStreams: List yields a file before it has walked the folders
// that sort after it, so a listing of a million files is not held in
// memory: a file written into a later folder once the first key is out is
// still listed, as it would not be by a walk collected before yielding.
func TestListStreams(t *testing.T) {
	for _, skipping := range []bool{false, true} {
		t.Run(fmt.Sprintf("skipping=%v", skipping), func(t *testing.T) {
			dir := t.TempDir()
			for _, p := range []string{"a/1.csv", "b/1.csv"} {
				writeFile(t, filepath.Join(dir, p), "x")
			}
			s, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			seq := s.List(context.Background(), "")
			if skipping {
				seq = s.ListSkipping(context.Background(), "_tidemark", nil)
			}
			var got []string
			for o, err := range seq {
				if err != nil {
					t.Fatal(err)
				}
				if len(got) == 0 {
					writeFile(t, filepath.Join(dir, "b", "2.csv"), "late")
				}
				got = append(got, o.Key)
			}
			if want := []string{"a/1.csv", "b/1.csv", "b/2.csv"}; !slices.Equal(got, want) {
				t.Errorf("keys %q, want %q: the listing was collected before the first key was yielded", got, want)
			}
		})
	}
}

// TestSymlinksFoundOrder: of two links to one folder, the one a walk in
// name order meets first lists it, as before listings streamed in key
// order (which meets "a.b" before the folder "a"): the keys of files
// under links do not change, so their recorded identities still match.
func TestSymlinksFoundOrder(t *testing.T) {
	base := t.TempDir()
	writeFile(t, filepath.Join(base, "outside", "x.csv"), "x")
	writeFile(t, filepath.Join(base, "root", "a", "plain.csv"), "p")
	for target, link := range map[string]string{"../../outside": "root/a/l", "../outside": "root/a.b"} {
		if err := os.Symlink(target, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := local.New(filepath.Join(base, "root"))
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	ctx := objstore.WithListTrace(context.Background(), &objstore.ListTrace{
		Skipped: func(key, why string) { skipped[key] = why },
	})
	var got []string
	for o, err := range s.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Key)
	}
	if want := []string{"a/l/x.csv", "a/plain.csv"}; !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	if !strings.Contains(skipped["a.b"], "listed as a/l") {
		t.Errorf("a.b skipped as %q, want it reported as listed as a/l", skipped["a.b"])
	}
}

// TestListOrderRandomTrees: random trees whose names share prefixes with
// the bytes that sort around '/' ('-', '.', '0'), with and without a
// symlink to a folder outside (past which the listing collects): List
// yields every file once, in byte order, and stops where it is told to.
func TestListOrderRandomTrees(t *testing.T) {
	names := []string{"a", "a-b", "a.b", "a0", "a b", "b", "B", "_h", "é"}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		base := t.TempDir()
		root := filepath.Join(base, "root")
		var want []string
		made := map[string]bool{}
		for range 30 {
			var parts []string
			for d := r.IntN(4); d >= 0; d-- {
				parts = append(parts, names[r.IntN(len(names))])
			}
			key := strings.Join(parts, "/")
			if conflicts(made, key) {
				continue
			}
			made[key] = true
			writeFile(t, filepath.Join(root, filepath.FromSlash(key)), key)
			if !slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, "_") }) {
				want = append(want, key)
			}
		}
		if seed%2 == 1 { // a link to a folder outside, at a random place
			writeFile(t, filepath.Join(base, "outside", "o.csv"), "o")
			link := names[r.IntN(len(names)-2)] + "-link" // not "_h" (hidden) nor "é"
			if err := os.Symlink("../outside", filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
			want = append(want, link+"/o.csv")
		}
		slices.Sort(want)
		s, err := local.New(root)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for o, err := range s.List(context.Background(), "") {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, o.Key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: keys\n%q\nwant\n%q", seed, got, want)
		}
		if len(want) > 1 {
			n := 1 + r.IntN(len(want)-1)
			var part []string
			for o, err := range s.List(context.Background(), "") {
				if err != nil {
					t.Fatal(err)
				}
				if part = append(part, o.Key); len(part) == n {
					break
				}
			}
			if !slices.Equal(part, want[:n]) {
				t.Fatalf("seed %d: stopped after %d keys: %q, want %q", seed, n, part, want[:n])
			}
		}
	}
}

// conflicts reports whether key cannot be a file beside the files made:
// a disk cannot hold a file that is also a folder of another.
func conflicts(made map[string]bool, key string) bool {
	for k := range made {
		if k == key || strings.HasPrefix(k, key+"/") || strings.HasPrefix(key, k+"/") {
			return true
		}
	}
	return false
}

func writeFile(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
