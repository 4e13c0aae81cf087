package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/objstore/objstoretest"
)

func TestContract(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestSymlinks(t *testing.T) {
	base := t.TempDir()
	mk := func(p, body string) {
		t.Helper()
		p = filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(base, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("root/real/a.csv", "a")
	mk("outside/sub/b.csv", "bb")
	mk("outside/sub/c/d.csv", "ddd")
	mk("outside/f.csv", "ffff")
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(base, "outside/f.csv"), old, old); err != nil {
		t.Fatal(err)
	}
	ln("../outside/sub", "root/sub")          // a folder outside: followed
	ln("../outside/f.csv", "root/f.csv")      // a file outside: followed
	ln("../outside/sub", "root/sub2")         // the same folder again: once is enough
	ln(".", "root/loop")                      // the root itself: a loop
	ln("..", "root/real/up")                  // an ancestor: a loop
	ln("real/a.csv", "root/latest.csv")       // a file listed by its own path
	ln("nope.csv", "root/dangling.csv")       // dangling
	ln("self", "root/self")                   // a link to itself
	ln("user@host.1234", "root/.#lock")       // hidden and dangling: an editor's lock, not reported
	ln("../../outside/sub/c", "root/real/cc") // part of a folder followed later: listed here, not there
	ln("root", "rootlink")                    // the root through a link

	for _, root := range []string{"root", "rootlink"} {
		t.Run(root, func(t *testing.T) {
			s, err := local.New(filepath.Join(base, root))
			if err != nil {
				t.Fatal(err)
			}
			skipped := map[string]string{}
			ctx := objstore.WithListTrace(context.Background(), &objstore.ListTrace{
				Skipped: func(key, why string) { skipped[key] = why },
			})
			got := map[string]objstore.Object{}
			var order []string
			for o, err := range s.List(ctx, "") {
				if err != nil {
					t.Fatal(err)
				}
				got[o.Key] = o
				order = append(order, o.Key)
			}
			want := []string{"f.csv", "real/a.csv", "real/cc/d.csv", "sub/b.csv"}
			if !slices.Equal(order, want) {
				t.Errorf("keys %q, want %q", order, want)
			}
			if f := got["f.csv"]; f.Size != 4 || !f.ModTime.Equal(old) {
				t.Errorf("symlinked file f.csv: size %d mtime %v, want its target's: 4 and %v", f.Size, f.ModTime, old)
			}
			wantSkipped := map[string]string{
				"sub2": "listed as sub:", "loop": "loop", "real/up": "loop", "latest.csv": "listed as real/a.csv",
				"dangling.csv": "does not exist", "self": "loop of symlinks", "sub/c": "already listed as real/cc",
			}
			for k, w := range wantSkipped {
				if !strings.Contains(skipped[k], w) {
					t.Errorf("skipped %s: got %q, want a reason with %q", k, skipped[k], w)
				}
			}
			for k := range skipped {
				if _, ok := wantSkipped[k]; !ok {
					t.Errorf("skipped %s (%s), want it not reported", k, skipped[k])
				}
			}
			if o, err := s.Stat(ctx, "f.csv"); err != nil || o.Size != 4 {
				t.Errorf("Stat(f.csv) = %+v, %v; want the target's size 4", o, err)
			}
			if err := s.CheckRoot(ctx); err != nil {
				t.Errorf("CheckRoot of an existing root: %v", err)
			}
		})
	}
}

func TestCheckRoot(t *testing.T) {
	base := t.TempDir()
	if err := os.Symlink("gone", filepath.Join(base, "dangling")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"missing": "missing does not exist", "dangling": "dangling is a symlink to gone, which does not exist"} {
		s, _ := local.New(filepath.Join(base, name))
		err := s.CheckRoot(context.Background())
		if !errors.Is(err, objstore.ErrNotExist) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckRoot(%s) = %v, want ErrNotExist saying %q", name, err, want)
		}
		// Listing a missing root is no error (a sink's folder before its first run).
		for _, err := range s.List(context.Background(), "") {
			t.Errorf("List(%s): %v", name, err)
		}
	}
}

// TestContractWithoutHardLinks: on a file system without hard links
// (FAT, many FUSE and SMB mounts) the store still keeps its contract,
// Create's exactly-one-wins included.
func TestContractWithoutHardLinks(t *testing.T) {
	defer local.WithoutHardLinks()()
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestWrittenFilesReadable: objects written through Put and Create (an
// ownership record, a reject file) are readable by other users like the
// engine's output files, not private to the writer (os.CreateTemp's 0600).
func TestWrittenFilesReadable(t *testing.T) {
	s, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, "a/put.json", strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "a/created.json", strings.NewReader("{}")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a/put.json", "a/created.json"} {
		p, _ := s.LocalPath(key)
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&0o044 != 0o044 {
			t.Errorf("%s: mode %v, want readable by group and others", key, perm)
		}
	}
}
