package tidemark

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"
)

// TestBookmarks: a program asks for the new files, commits them, and is
// given only newer ones next time; one that closes without committing
// sees the same files again. The lease is held from open to close.
func TestBookmarks(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	src := job.Source{Ctx: "in", Config: &srcfiles.Config{Path: w.in, Format: "csv"}}
	paths := func(fs []bookmark.File) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path)
		}
		return out
	}

	b, err := OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBookmarks(t.Context(), w.state, jobName); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("second open: got %v, want store.ErrLeaseHeld", err)
	}
	fs, err := b.NewFiles(t.Context(), src)
	if err != nil || !slices.Equal(paths(fs), []string{"a.csv"}) {
		t.Fatalf("new files: got %q (%v), want a.csv", paths(fs), err)
	}
	if _, err := b.NewFiles(t.Context(), src); err == nil || !strings.Contains(err.Error(), "called twice") {
		t.Errorf("NewFiles twice: got %v, want an error", err)
	}
	head, err := b.Commit(t.Context(), map[string]int64{"in": 7})
	if err != nil || head.Version == 0 {
		t.Fatalf("commit: got %+v (%v), want a new version", head, err)
	}
	if _, err := b.Commit(t.Context(), nil); err == nil {
		t.Error("second commit: got no error")
	}
	if _, err := b.NewFiles(t.Context(), src); err == nil {
		t.Error("NewFiles after commit: got no error")
	}
	if err := b.Close(); err != nil {
		t.Errorf("close after commit: %v", err)
	}
	runs, err := w.store().Runs(t.Context(), jobName, store.RunQuery{})
	if err != nil || len(runs) != 1 || runs[0].Sources["in"].Rows != 7 || runs[0].Status != store.StatusSucceeded {
		t.Fatalf("runs: got %+v (%v), want one succeeded run of 7 rows", runs, err)
	}

	w.write("b.csv", "2")
	b, err = OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	if fs, err = b.NewFiles(t.Context(), src); err != nil || !slices.Equal(paths(fs), []string{"b.csv"}) {
		t.Fatalf("new files: got %q (%v), want b.csv", paths(fs), err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	runs, _ = w.store().Runs(t.Context(), jobName, store.RunQuery{})
	if len(runs) != 2 || runs[0].Status != store.StatusFailed {
		t.Errorf("runs after close: got %+v, want the closed one failed", runs)
	}
	b, err = OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if fs, err = b.NewFiles(t.Context(), src); err != nil || !slices.Equal(paths(fs), []string{"b.csv"}) {
		t.Errorf("new files after a close: got %q (%v), want b.csv again", paths(fs), err)
	}
}

// TestJobNamesFromCodeChecked: a job named from code (the library's
// OpenBookmarks, a Glue session) is held to the job file's name rule: a
// name with a path separator or a glob character would put its state
// outside the job's keys, or make the clean-up of its temporary folders
// match other jobs'.
func TestJobNamesFromCodeChecked(t *testing.T) {
	w := newWorld(t)
	for _, name := range []string{"..", "a/b", "sales*", ""} {
		if _, err := OpenBookmarks(t.Context(), w.state, name); !errors.Is(err, ErrUsage) {
			t.Errorf("OpenBookmarks(%q): got %v, want a usage error", name, err)
		}
		if _, err := BeginSession(t.Context(), SessionOptions{Job: name, State: w.state, Dir: w.dir}); !errors.Is(err, ErrUsage) {
			t.Errorf("BeginSession(%q): got %v, want a usage error", name, err)
		}
	}
}

// TestBookmarksMarksDeadRuns: the Bookmarks API begins its run as Run and
// a session do: a run of the job whose holder died (its lease expired) is
// marked failed (it stayed running for ever when only Bookmarks ran the
// job).
func TestBookmarksMarksDeadRuns(t *testing.T) {
	w := newWorld(t)
	ctx := t.Context()
	st := w.store()
	l, err := st.AcquireLease(ctx, jobName, store.Holder{ID: "dead", Host: "elsewhere"}, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginRun(ctx, l.Token, store.Run{Job: jobName, RunID: "dead", Host: "elsewhere", Status: store.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	b, err := OpenBookmarks(ctx, w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := st.Run(ctx, jobName, "dead")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusFailed {
		t.Errorf("the dead run: status %s, want failed", r.Status)
	}
}
