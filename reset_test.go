package tidemark

import (
	"time"

	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

// threeRuns runs the job three times, over a.csv, b.csv and c.csv, and
// returns the run ids.
func (w *world) threeRuns() []string {
	w.t.Helper()
	var ids []string
	for i, name := range []string{"a.csv", "b.csv", "c.csv"} {
		w.write(name, string(rune('1'+i)))
		ids = append(ids, w.run(RunOptions{}).RunID)
	}
	return ids
}

// finalOf is the path of a run's one published file.
func (w *world) finalOf(runID string) string {
	return filepath.Join(w.out, "part-"+runID+"-00000.csv")
}

// TestResetPurge: a rewind with purge undoes the later runs and deletes
// exactly their published files; the next run reads their input again.
func TestResetPurge(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	res, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: ids[0], Purge: true})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	if got, want := sorted(res.Undone), sorted(ids[1:]); !slices.Equal(got, want) {
		t.Errorf("undone: got %q, want %q", got, want)
	}
	if got, want := sorted(res.Purged), sorted(ids[1:]); !slices.Equal(got, want) {
		t.Errorf("purged: got %q, want %q", got, want)
	}
	if got, want := sorted(res.Deleted), sorted([]string{w.finalOf(ids[1]), w.finalOf(ids[2])}); !slices.Equal(got, want) {
		t.Errorf("deleted: got %q, want %q", got, want)
	}
	if len(res.Gone) > 0 {
		t.Errorf("gone: got %q, want none", res.Gone)
	}
	w.wantLines("1")
	if got, want := w.recorded(), []string{"a.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded after the rewind: got %q, want %q", got, want)
	}
	for _, id := range ids[1:] {
		if r := w.runRecord(id); !r.Undone || !r.Purged {
			t.Errorf("run %s: got undone %v purged %v, want both", id, r.Undone, r.Purged)
		}
	}
	if r := w.runRecord(ids[0]); r.Undone || r.Purged {
		t.Errorf("target run: got undone %v purged %v, want neither", r.Undone, r.Purged)
	}
	if got := w.run(RunOptions{}).Sources["in"].Files; got != 2 {
		t.Errorf("files read after the rewind: got %d, want 2", got)
	}
	w.wantLines("1", "2", "3")
}

// TestResetWithoutPurge: a rewind without purge leaves the output; a later
// purge deletes the output of the runs undone then too.
func TestResetWithoutPurge(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	res, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: ids[0]})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	if len(res.Undone) != 2 || len(res.Purged) != 0 || len(res.Deleted) != 0 {
		t.Errorf("reset: got undone %q purged %q deleted %q, want 2 undone, nothing purged", res.Undone, res.Purged, res.Deleted)
	}
	w.wantLines("1", "2", "3")
	again := w.run(RunOptions{}).RunID
	w.wantLines("1", "2", "2", "3", "3")
	res, err = Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: ids[0], Purge: true})
	if err != nil {
		t.Fatalf("second reset: %v", err)
	}
	if got, want := len(res.Purged), 3; got != want {
		t.Errorf("purged: got %q, want %d runs (%s, %s and %s)", res.Purged, want, ids[1], ids[2], again)
	}
	w.wantLines("1")
}

// TestResetClear: a reset without a target clears the bookmark; with purge
// every run's output goes.
func TestResetClear(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	res, err := Reset(t.Context(), w.store(), jobName, ResetOptions{Purge: true})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	if len(res.Purged) != 3 || res.Version != w.head() {
		t.Errorf("reset: got %d purged, version %d, want 3 purged at head %d", len(res.Purged), res.Version, w.head())
	}
	w.wantLines()
	if got := w.recorded(); len(got) > 0 {
		t.Errorf("recorded after clearing: %q", got)
	}
}

// TestResetGone: a purged run's file that is no longer where it was
// published is reported gone, not deleted.
func TestResetGone(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	if err := os.Remove(w.finalOf(ids[2])); err != nil {
		t.Fatal(err)
	}
	res, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: ids[0], Purge: true})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	if !slices.Equal(res.Gone, []string{w.finalOf(ids[2])}) || !slices.Equal(res.Deleted, []string{w.finalOf(ids[1])}) {
		t.Errorf("reset: got deleted %q gone %q, want %s deleted, %s gone", res.Deleted, res.Gone, ids[1], ids[2])
	}
}

// TestResetUnknownRun: a rewind to a run the job does not have is a usage
// error and changes nothing.
func TestResetUnknownRun(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	v := w.head()
	_, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: "20260101T000000Z-000000", Purge: true})
	if !errors.Is(err, ErrUsage) {
		t.Errorf("reset: got %v, want ErrUsage", err)
	}
	if w.head() != v {
		t.Errorf("bookmark version: got %d, want %d", w.head(), v)
	}
	w.wantLines("1", "2", "3")
}

// TestResetMarksDead: a reset marks a run that died before committing
// failed and rolls a committed one forward before it rewinds.
func TestResetMarksDead(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	st := w.store()
	// The dead run held the lease, then died: its lease was freed.
	l, err := st.AcquireLease(t.Context(), jobName, store.Holder{ID: "dead"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dead, err := st.BeginRun(t.Context(), l.Token, store.Run{Job: jobName, RunID: "20991231T000000Z-dead00", Status: store.StatusRunning,
		Mode: "enable", StartedAt: w.runRecord(ids[2]).StartedAt})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.BreakLease(t.Context(), jobName, l.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := Reset(t.Context(), st, jobName, ResetOptions{ToRun: ids[1]}); err != nil {
		t.Fatalf("reset: %v", err)
	}
	if r := w.runRecord(dead.RunID); r.Status != store.StatusFailed {
		t.Errorf("dead run: got %s, want failed", r.Status)
	}
}

// TestResetRollsForward: a committed, unpublished run is published by a
// reset before the rewind; with purge it is then deleted.
func TestResetRollsForward(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	first := w.run(RunOptions{}).RunID
	w.write("b.csv", "2")
	w.write("c.csv", "3")
	var crashed string
	w.runCrashing("after-commit", func() { crashed = w.stagingRun() })
	res, err := Reset(t.Context(), w.store(), jobName, ResetOptions{ToRun: first, Purge: true})
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	if !slices.Equal(res.Purged, []string{crashed}) || !slices.Equal(res.Deleted, []string{w.finalOf(crashed)}) {
		t.Errorf("reset: got purged %q deleted %q, want the crashed run's file", res.Purged, res.Deleted)
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staging left: %q", left)
	}
	w.wantLines("1")
}
