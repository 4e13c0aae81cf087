package tidemark_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"
)

func TestBookmarksAPI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "in", name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("a.csv")
	write("b.csv")
	src := job.Source{Ctx: "landing", Config: &srcfiles.Config{Path: filepath.Join(dir, "in")}}

	newFiles := func(commit bool) []string {
		t.Helper()
		b, err := tidemark.OpenBookmarks(ctx, state, "api-job")
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		files, err := b.NewFiles(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range files {
			names = append(names, f.Path)
		}
		if commit {
			if _, err := b.Commit(ctx, map[string]int64{"landing": int64(len(files))}); err != nil {
				t.Fatal(err)
			}
		}
		return names
	}
	if got := newFiles(false); len(got) != 2 {
		t.Fatalf("first look: got %v, want a.csv and b.csv", got)
	}
	if got := newFiles(true); len(got) != 2 {
		t.Fatalf("uncommitted files must be new again: got %v", got)
	}
	if got := newFiles(true); len(got) != 0 {
		t.Fatalf("after commit: got %v, want nothing new", got)
	}
	write("c.csv")
	if got := newFiles(true); len(got) != 1 || got[0] != "c.csv" {
		t.Fatalf("after a new file: got %v, want [c.csv]", got)
	}

	// The lease keeps a second user out while one is open.
	b, err := tidemark.OpenBookmarks(ctx, state, "api-job")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := tidemark.OpenBookmarks(ctx, state, "api-job"); !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("second OpenBookmarks: got %v, want ErrLeaseHeld", err)
	}
}
