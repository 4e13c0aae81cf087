package sqlite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

// TestOpenExistingCreatesNothing: a missing state is store.ErrNoState,
// read-only or not, and neither the file nor its folder is created.
func TestOpenExistingCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "state.db")
	for _, ro := range []bool{true, false} {
		_, err := OpenExisting(t.Context(), path, ro)
		if !errors.Is(err, store.ErrNoState) || !strings.Contains(err.Error(), path) {
			t.Errorf("OpenExisting(missing, readOnly=%v): %v, want ErrNoState naming %s", ro, err, path)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting created %s (stat: %v)", dir, err)
	}
	_, err := store.OpenExisting(t.Context(), "sqlite://"+path, true)
	if !errors.Is(err, store.ErrNoState) {
		t.Errorf("store.OpenExisting(sqlite://missing): %v, want ErrNoState", err)
	}
}

// TestReadOnlyWhileWriting: a read-only store reads what a writer commits
// while both are open, and refuses to write.
func TestReadOnlyWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	w, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	l, err := w.AcquireLease(t.Context(), "j", store.Holder{ID: "r1"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, w, l, "r1", 0, "a")

	r, err := OpenExisting(t.Context(), path, true)
	if err != nil {
		t.Fatalf("OpenExisting read-only beside a writer: %v", err)
	}
	defer r.Close()
	if h, err := r.Head(t.Context(), "j"); err != nil || h.Version != 1 {
		t.Fatalf("read-only Head = %+v, %v; want version 1", h, err)
	}
	commitFiles(t, w, l, "r2", 1, "b")
	if h, err := r.Head(t.Context(), "j"); err != nil || h.Version != 2 {
		t.Errorf("read-only Head after the writer's second commit = %+v, %v; want version 2", h, err)
	}
	if got := paths(t, r, "j"); strings.Join(got, ",") != "a,b" {
		t.Errorf("read-only Files = %v, want [a b]", got)
	}
	if jobs, err := r.Jobs(t.Context()); err != nil || strings.Join(jobs, ",") != "j" {
		t.Errorf("Jobs = %v, %v; want [j]", jobs, err)
	}
	if _, err := r.AcquireLease(t.Context(), "k", store.Holder{ID: "x"}, leaseTTL); err == nil {
		t.Errorf("a read-only store took a lease")
	}
}

// TestReadOnlyFolder: with the folder and file not writable and no -wal or
// -shm left, the state opens read-only (immutable) and reads; a writable
// open fails saying read-only and naming the path. Root ignores
// permissions, so the test needs another user.
func TestReadOnlyFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes read-only folders; e2e TestReadOnlyState covers this as another user")
	}
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "state.db")
	w, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := w.AcquireLease(t.Context(), "j", store.Holder{ID: "r1"}, leaseTTL)
	commitFiles(t, w, l, "r1", 0, "a")
	w.Close()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)

	r, err := OpenExisting(t.Context(), path, true)
	if err != nil {
		t.Fatalf("OpenExisting read-only in a read-only folder: %v", err)
	}
	if h, err := r.Head(t.Context(), "j"); err != nil || h.Version != 1 {
		t.Errorf("Head = %+v, %v; want version 1", h, err)
	}
	r.Close()
	_, err = Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open for writing in a read-only folder: %v, want an error saying read-only and naming %s", err, path)
	}
}

// TestReadOnlyLegacy: a relational state (the format before objects)
// opened read-only is read through memory: its jobs read as they were,
// writes are refused, and the file is left as it was, bytes and all.
func TestReadOnlyLegacy(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	id := legacyJob(t, path)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenExisting(ctx, path, true)
	if err != nil {
		t.Fatalf("OpenExisting read-only of a relational state: %v", err)
	}
	if h, err := r.Head(ctx, "j"); err != nil || h.Version != 1 {
		t.Errorf("Head = %+v, %v; want version 1", h, err)
	}
	if got := paths(t, r, "j"); strings.Join(got, ",") != "a,b" {
		t.Errorf("Files = %v, want [a b]", got)
	}
	if got, err := r.Identity(ctx); err != nil || got.ID != id || got.Location != path {
		t.Errorf("Identity = %+v, %v; want id %s at %s", got, err, id, path)
	}
	if _, err := r.AcquireLease(ctx, "j", store.Holder{ID: "x"}, leaseTTL); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("AcquireLease on a read-only relational state: %v, want refused as read-only", err)
	}
	r.Close()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the relational state file changed on a read-only open")
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil && fi.Size() > 0 && suffix == "-wal" {
			t.Errorf("a read-only open left a -wal of %d bytes", fi.Size())
		}
	}
}
