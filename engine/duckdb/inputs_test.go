package duckdb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
)

// TestHiveSourceWithoutPartitionsReadInPlace: a hive source's files are
// read through links only where a key=value folder is on their path; the
// others are read in place (a link per file made a first run over 100,000
// files spend most of its time in symlink calls).
func TestHiveSourceWithoutPartitionsReadInPlace(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "d0001", "a.csv")
	part := filepath.Join(dir, "day=1", "b.csv")
	for _, p := range []string{plain, part} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := &linker{base: t.TempDir()}
	defer l.cleanup()
	src := &engine.Source{Ctx: "s", Hive: true, Files: []engine.Input{
		{Location: plain, Key: "d0001/a.csv", Size: 4},
		{Location: part, Key: "day=1/b.csv", Size: 4},
	}}
	if _, err := prepareInputs(src, 0, l); err == nil {
		t.Fatalf("got no error for files with and without partition folders, want one")
	}
	src.Files = src.Files[:1]
	in, err := prepareInputs(src, 0, l)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := in.paths[0], plain; got != want {
		t.Errorf("read path of a file with no key=value folder: got %s, want %s (in place)", got, want)
	}
	src.Files = []engine.Input{{Location: part, Key: "day=1/b.csv", Size: 4}}
	if in, err = prepareInputs(src, 1, l); err != nil {
		t.Fatal(err)
	}
	if got := in.paths[0]; got == part {
		t.Errorf("read path of a file under day=1/: got %s, want a link whose folders are the key's only", got)
	}
}
