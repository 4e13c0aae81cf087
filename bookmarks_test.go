package tidemark

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/lineage"
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
	// Closed without a commit, the program wrote nothing: no run (as a
	// Session's program that ends before its first sink).
	runs, _ = w.store().Runs(t.Context(), jobName, store.RunQuery{})
	if len(runs) != 1 {
		t.Errorf("runs after close: got %+v, want only the committed one", runs)
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

// TestBookmarksRecordsAtCommit: issue #19 item 3. The Bookmarks API
// records its run at its first write, its Commit, as a Session does at
// its first sink: a program that opens and closes without committing,
// having asked for new files or not, leaves no run and no bookmark change
// (each such open left a failed run in the history).
func TestBookmarksRecordsAtCommit(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	src := job.Source{Ctx: "in", Config: &srcfiles.Config{Path: w.in, Format: "csv"}}
	for _, ask := range []bool{false, true} {
		b, err := OpenBookmarks(t.Context(), w.state, jobName)
		if err != nil {
			t.Fatal(err)
		}
		if ask {
			if fs, err := b.NewFiles(t.Context(), src); err != nil || len(fs) != 1 {
				t.Fatalf("new files: got %d (%v), want a.csv", len(fs), err)
			}
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		runs, err := w.store().Runs(t.Context(), jobName, store.RunQuery{})
		if err != nil || len(runs) != 0 {
			t.Errorf("runs after an open and a close (new files asked: %v): got %+v (%v), want none", ask, runs, err)
		}
		head, err := w.store().Head(t.Context(), jobName)
		if err != nil || head.Version != 0 {
			t.Errorf("bookmark after an open and a close (new files asked: %v): version %d (%v), want 0", ask, head.Version, err)
		}
	}
}

// TestBookmarksChecksDefinition: issue #19 item 3. NewFiles runs Run's
// checks before it plans: a source whose definition changed under its
// ctx (another format) is refused as a job file's is (exit 2, naming the
// ctx), and the program that ends on it leaves no run (the refusal left
// a failed run, recorded at the open).
func TestBookmarksChecksDefinition(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	b, err := OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewFiles(t.Context(), job.Source{Ctx: "in", Config: &srcfiles.Config{Path: w.in, Format: "csv"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	w.write("b.csv", "2")
	b, err = OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := b.NewFiles(t.Context(), job.Source{Ctx: "in", Config: &srcfiles.Config{Path: w.in, Format: "json"}})
	if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), "in") {
		t.Errorf("new files of a source whose format changed: got %d files (%v, exit %d), want a refusal naming ctx in (exit %d)",
			len(fs), err, ExitCode(err), ExitUsage)
	}
	_ = b.Close()
	runs, err := w.store().Runs(t.Context(), jobName, store.RunQuery{})
	if err != nil || len(runs) != 1 {
		t.Errorf("runs after the refusal: got %d (%v), want the first only", len(runs), err)
	}
}

// TestBookmarksSendsLineage: issue #19 item 3. The Bookmarks API sends
// the OpenLineage events Run sends (OPENLINEAGE_URL): START when its run
// is recorded and COMPLETE naming the source it read; a program that
// closes without committing is no run and sends nothing (the API sent no
// events).
func TestBookmarksSendsLineage(t *testing.T) {
	var mu sync.Mutex
	var events []lineage.RunEvent
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var ev lineage.RunEvent
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("decoding an event: %v", err)
		}
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
		rw.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	t.Setenv(lineage.EnvURL, srv.URL)
	take := func() []lineage.RunEvent {
		mu.Lock()
		defer mu.Unlock()
		evs := events
		events = nil
		return evs
	}
	w := newWorld(t)
	w.write("a.csv", "1")
	src := job.Source{Ctx: "in", Config: &srcfiles.Config{Path: w.in, Format: "csv"}}

	b, err := OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewFiles(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	evs := take()
	if len(evs) != 2 || evs[0].EventType != lineage.EventStart || evs[1].EventType != lineage.EventComplete {
		t.Fatalf("a commit sent %d events %+v, want START and COMPLETE", len(evs), evs)
	}
	if end := evs[1]; end.Job.Name != jobName || len(end.Inputs) != 1 || !strings.HasSuffix(end.Inputs[0].Name, "/in") {
		t.Errorf("COMPLETE: job %q inputs %+v, want job %s reading the in/ folder", end.Job.Name, end.Inputs, jobName)
	}

	w.write("b.csv", "2")
	b, err = OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewFiles(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	_ = b.Close()
	if evs := take(); len(evs) != 0 {
		t.Errorf("a close without a commit sent %d events %+v, want none (no run)", len(evs), evs)
	}
}

// TestBookmarksRecordsAFailureThatIsNoRefusal: a source that fails
// otherwise than refused (a folder that is not there) is a failed run when
// the program closes on it, as Run records a run whose source could not
// be opened; the bookmark does not move.
func TestBookmarksRecordsAFailureThatIsNoRefusal(t *testing.T) {
	w := newWorld(t)
	b, err := OpenBookmarks(t.Context(), w.state, jobName)
	if err != nil {
		t.Fatal(err)
	}
	src := job.Source{Ctx: "in", Config: &srcfiles.Config{Path: filepath.Join(w.dir, "typo"), Format: "csv"}}
	if _, err := b.NewFiles(t.Context(), src); err == nil {
		t.Fatal("a source folder that is not there: got no error")
	}
	_ = b.Close()
	runs, err := w.store().Runs(t.Context(), jobName, store.RunQuery{})
	if err != nil || len(runs) != 1 || runs[0].Status != store.StatusFailed || !strings.Contains(runs[0].Error, "typo") {
		t.Errorf("runs after the failure: got %+v (%v), want one failed run naming the folder", runs, err)
	}
	if head, err := w.store().Head(t.Context(), jobName); err != nil || head.Version != 0 {
		t.Errorf("bookmark after the failure: version %d (%v), want 0", head.Version, err)
	}
}
