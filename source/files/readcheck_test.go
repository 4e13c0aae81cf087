package files

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/objstore/local"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// stampPlan is a plan of one local source to read files.
func stampPlan(t *testing.T, dir string, files ...bookmark.File) *Plan {
	t.Helper()
	objs, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Ctx: "s", Take: files, src: &Source{objs: objs, location: dir}}
}

func planned(t *testing.T, dir, name string) bookmark.File {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return bookmark.File{Path: name, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
}

// TestStampInputs: a file changed since planning is recorded as it is when
// the engine starts; one that vanished is dropped as missing; a file whose
// last change is of this clock tick is stamped only once the tick has
// passed, an old one at once; a rewrite that keeps size and mtime is a
// change (ctime).
func TestStampInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string, mtime time.Time) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	write("grown.csv", "a\n1\n", old)
	write("gone.csv", "a\n1\n", old)
	write("same.csv", "a\n1\n", old)
	p := stampPlan(t, dir, planned(t, dir, "grown.csv"), planned(t, dir, "gone.csv"), planned(t, dir, "same.csv"))
	write("grown.csv", "a\n1\n2\n", old.Add(time.Minute))
	os.Remove(filepath.Join(dir, "gone.csv"))

	start := time.Now()
	ins, err := p.stampInputs(discard)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("stamping files an hour old took %v, want no wait", d)
	}
	if len(ins) != 2 || len(p.Take) != 2 || len(p.missing) != 1 || p.missing[0] != "gone.csv" {
		t.Fatalf("after stamping: inputs %+v, take %+v, missing %v; want grown.csv and same.csv, gone.csv missing", ins, p.Take, p.missing)
	}
	if got, want := p.Take[0], planned(t, dir, "grown.csv"); got != want {
		t.Errorf("a file grown since planning is recorded as %+v, want %+v (as the engine reads it)", got, want)
	}
	if changed := changedInputs(ins); len(changed) != 0 {
		t.Errorf("changedInputs with nothing changed: %v", changed)
	}
	write("same.csv", "b\n2\n", old) // same size, same mtime: ctime tells
	if changed := changedInputs(ins); !changed["same.csv"] || len(changed) != 1 {
		t.Errorf("changedInputs after a rewrite that kept size and mtime: %v, want same.csv", changed)
	}

	// Just written: its ctime is of this clock tick.
	if err := os.WriteFile(filepath.Join(dir, "fresh.csv"), []byte("a\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p = stampPlan(t, dir, planned(t, dir, "fresh.csv"))
	ins, err = p.stampInputs(discard)
	if err != nil {
		t.Fatal(err)
	}
	if now, settled := time.Now(), ins[0].before.settledAt(); now.Before(settled) {
		t.Errorf("stamping a file of this clock tick returned at %v, before its tick ended (%v)", now, settled)
	}
}
