package tidemark

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"
)

// TestRunPublishes: a run stages the engine's output, commits it with the
// bookmark and publishes it; staging and temporary folders are gone.
func TestRunPublishes(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1", "2")
	w.write("b.csv", "3")
	res := w.run(RunOptions{})
	if res.Status != store.StatusSucceeded {
		t.Fatalf("status: got %s, want succeeded", res.Status)
	}
	if got, want := res.Sources["in"], (store.Count{Files: 2, Bytes: 6, Rows: 3}); got != want {
		t.Errorf("source count: got %+v, want %+v", got, want)
	}
	if got := res.Sinks["out"]; got.Files != 1 || got.Rows != 3 {
		t.Errorf("sink count: got %+v, want 1 file, 3 rows", got)
	}
	w.wantLines("1", "2", "3")
	_, files := w.published()
	if want := "part-" + res.RunID + "-00000.csv"; !slices.Equal(files, []string{want}) {
		t.Errorf("published files: got %q, want [%s]", files, want)
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staging left after publish: %q", left)
	}
	if left := w.spilled(); len(left) > 0 {
		t.Errorf("spill folder left after the run: %q", left)
	}
	if got, want := w.recorded(), []string{"a.csv", "b.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded files: got %q, want %q", got, want)
	}
	rec := w.runRecord(res.RunID)
	if rec.Status != store.StatusSucceeded || rec.Version != w.head() || rec.Version == 0 {
		t.Errorf("run record: got status %s version %d, want succeeded at head %d", rec.Status, rec.Version, w.head())
	}
	pending, err := w.store().Unpublished(t.Context(), jobName)
	if err != nil || len(pending) > 0 {
		t.Errorf("unpublished runs after a run: got %v (%v), want none", pending, err)
	}
	if w.fake.opened != 1 || w.fake.closed != 1 {
		t.Errorf("engines opened/closed: got %d/%d, want 1/1", w.fake.opened, w.fake.closed)
	}
	// The engine was given the planned inputs and a staging location.
	p := w.fake.plans[0]
	if len(p.Sources) != 1 || len(p.Sources[0].Files) != 2 || p.Sources[0].Format != "csv" {
		t.Errorf("engine's sources: got %+v, want source in with 2 csv files", p.Sources)
	}
	if len(p.Sinks) != 1 || !strings.Contains(p.Sinks[0].Location, filepath.Join("_tidemark", "staging", res.RunID)) {
		t.Errorf("engine's sink: got %+v, want one staged under the run's staging folder", p.Sinks)
	}
}

// TestRunNothingNew: a run with nothing new commits a run record with no
// outputs and no bookmark change, and runs no engine.
func TestRunNothingNew(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.run(RunOptions{})
	v := w.head()
	res := w.run(RunOptions{})
	if got, want := res.Sources["in"], (store.Count{Detail: files.CountDetail{Unchanged: 1}}); got != want {
		t.Errorf("source count: got %+v, want %+v", got, want)
	}
	if got := res.Sinks["out"]; got != (store.Count{}) {
		t.Errorf("sink count: got %+v, want zero", got)
	}
	if got := w.fake.Calls(); got != 1 {
		t.Errorf("engine calls: got %d, want 1 (none for the second run)", got)
	}
	outs, err := w.store().Outputs(t.Context(), jobName, res.RunID)
	if err != nil || len(outs) != 0 {
		t.Errorf("outputs of an empty run: got %v (%v), want none", outs, err)
	}
	if rec := w.runRecord(res.RunID); rec.Status != store.StatusSucceeded {
		t.Errorf("empty run's status: got %s, want succeeded", rec.Status)
	}
	if got := w.head(); got != v {
		t.Errorf("bookmark version: got %d, want %d (unchanged)", got, v)
	}
	w.wantLines("1")
}

// TestRunEngineFails: an engine failure fails the recorded run; the
// bookmark does not move, the staged output is discarded and nothing is
// published; the next run reads the same files.
func TestRunEngineFails(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	var written []string
	w.fake.failWritten = func(int) error {
		written = w.staged() // what discarding must delete
		return errors.New("engine exploded")
	}
	res, err := w.runErr(RunOptions{})
	if !strings.Contains(err.Error(), "engine exploded") {
		t.Errorf("error: got %v, want the engine's", err)
	}
	if res == nil || res.Status != store.StatusFailed || !strings.Contains(res.Error, "engine exploded") {
		t.Fatalf("result: got %+v, want failed with the engine's error", res)
	}
	rec := w.runRecord(res.RunID)
	if rec.Status != store.StatusFailed || !strings.Contains(rec.Error, "engine exploded") || rec.FinishedAt.IsZero() {
		t.Errorf("run record: got %+v, want failed with the error, finished", rec)
	}
	if got := w.head(); got != 0 {
		t.Errorf("bookmark version after a failed first run: got %d, want 0", got)
	}
	if got := w.recorded(); len(got) > 0 {
		t.Errorf("recorded files after a failure: got %q, want none", got)
	}
	if len(written) == 0 {
		t.Fatal("the engine staged nothing before it failed")
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staging left after a failure: %q", left)
	}
	if left := w.spilled(); len(left) > 0 {
		t.Errorf("spill folder left after a failure: %q", left)
	}
	w.wantLines()
	w.fake.failWritten = nil
	w.run(RunOptions{})
	w.wantLines("1")
}

// TestRunInputError: a bad record under on_bad_record: fail fails the run
// with the engine's *engine.InputError, file and line intact, and no
// second execution.
func TestRunInputError(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1", "bad")
	res, err := w.runErr(RunOptions{})
	var ie *engine.InputError
	if !errors.As(err, &ie) || ie.File != "a.csv" || ie.Line != 2 {
		t.Fatalf("error: got %v, want an *engine.InputError at a.csv line 2", err)
	}
	if got := w.fake.Calls(); got != 1 {
		t.Errorf("engine calls: got %d, want 1", got)
	}
	if rec := w.runRecord(res.RunID); !strings.Contains(rec.Error, "a.csv line 2") {
		t.Errorf("recorded error: got %q, want it to name a.csv line 2", rec.Error)
	}
	w.wantLines()
}

// TestRunBadRecords: skip and quarantine count rejected rows; quarantined
// rows are published under the sink's _tidemark/rejects/<run>/.
func TestRunBadRecords(t *testing.T) {
	for _, policy := range []string{"skip", "quarantine"} {
		t.Run(policy, func(t *testing.T) {
			w := newWorld(t)
			w.onBad = policy
			w.write("a.csv", "1", "bad one", "2")
			res := w.run(RunOptions{})
			if got := res.Sources["in"]; got.Rows != 2 || got.Rejected != 1 {
				t.Errorf("source count: got %+v, want 2 rows, 1 rejected", got)
			}
			w.wantLines("1", "2")
			if got := w.fake.plans[0].OnBadRecord; got != policy {
				t.Errorf("engine's policy: got %q, want %q", got, policy)
			}
			rejects := filepath.Join(w.out, "_tidemark", "rejects", res.RunID, "in", "rejects.csv")
			_, err := os.Stat(rejects)
			if policy == "quarantine" && err != nil {
				t.Errorf("quarantined rows not published: %v", err)
			}
			if policy == "skip" && err == nil {
				t.Errorf("skipped rows published at %s", rejects)
			}
		})
	}
}

// TestRunWritesNothing: an engine that wrote no file for the sink still
// advances the bookmark; nothing is published.
func TestRunWritesNothing(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.fake.writeNothing = true
	res := w.run(RunOptions{})
	if got := res.Sinks["out"]; got != (store.Count{}) {
		t.Errorf("sink count: got %+v, want zero", got)
	}
	if got, want := w.recorded(), []string{"a.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded: got %q, want %q", got, want)
	}
	w.wantLines()
}

// TestRunRecordsSchema: the schema the engine reports is the source's
// bookmark schema, handed to the engine by the next run.
func TestRunRecordsSchema(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}}
	w.fake.schema = schema
	w.run(RunOptions{})
	states, err := w.store().SourceStates(t.Context(), jobName)
	if err != nil {
		t.Fatal(err)
	}
	if got := states["in"].Schema; !slices.Equal(got, schema) {
		t.Errorf("recorded schema: got %v, want %v", got, schema)
	}
	w.write("b.csv", "2")
	w.run(RunOptions{})
	if got := w.fake.plans[1].Sources[0].Schema; !slices.Equal(got, schema) {
		t.Errorf("schema given to the second run's engine: got %v, want %v", got, schema)
	}
}

// TestRunChangedWhileRead: an input that changed while the engine read it
// is dropped, the engine runs again without it, the run succeeds without
// its rows and the next run reads it.
func TestRunChangedWhileRead(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.write("b.csv", "2")
	w.fake.reading = func(call int, in engine.Input) {
		if call == 1 && in.Key == "b.csv" {
			appendLine(t, in.Location, "3")
		}
	}
	res := w.run(RunOptions{})
	if got := w.fake.Calls(); got != 2 {
		t.Errorf("engine calls: got %d, want 2", got)
	}
	if got := res.Sources["in"]; files.CountDetailOf(got).ChangedDuringRead != 1 || got.Files != 1 || got.Rows != 1 {
		t.Errorf("source count: got %+v, want 1 file, 1 row, 1 changed during read", got)
	}
	if got, want := w.recorded(), []string{"a.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded: got %q, want %q", got, want)
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staging of the void execution left: %q", left)
	}
	w.wantLines("1")
	w.fake.reading = nil
	w.run(RunOptions{})
	w.wantLines("1", "2", "3")
}

// TestRunKeepsChanging: inputs changing on every attempt (another each
// time) fail the run after source.MaxAttempts executions.
func TestRunKeepsChanging(t *testing.T) {
	w := newWorld(t)
	for _, name := range []string{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv", "f.csv"} {
		w.write(name, "1")
	}
	changedIn := 0
	w.fake.reading = func(call int, in engine.Input) {
		if changedIn < call { // the first input each execution reads
			changedIn = call
			appendLine(t, in.Location, "more")
		}
	}
	res, err := w.runErr(RunOptions{})
	if !strings.Contains(err.Error(), "kept changing") || !strings.Contains(err.Error(), "in: e.csv") {
		t.Errorf("error: got %v, want the file that kept changing", err)
	}
	if got, want := w.fake.Calls(), 5; got != want {
		t.Errorf("engine calls: got %d, want %d (source.MaxAttempts)", got, want)
	}
	if rec := w.runRecord(res.RunID); rec.Status != store.StatusFailed {
		t.Errorf("run status: got %s, want failed", rec.Status)
	}
	if got := w.head(); got != 0 {
		t.Errorf("bookmark version: got %d, want 0", got)
	}
	w.wantLines()
}

// TestRunDeletedAfterPlan: an input deleted between planning and reading
// is left out, unrecorded, and counted missing.
func TestRunDeletedAfterPlan(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.write("b.csv", "2")
	at(t, fault.AfterPlan, func() { _ = os.Remove(filepath.Join(w.in, "b.csv")) })
	res := w.run(RunOptions{})
	if got := res.Sources["in"]; files.CountDetailOf(got).Missing != 1 || got.Files != 1 {
		t.Errorf("source count: got %+v, want 1 file, 1 missing", got)
	}
	if got := w.fake.Calls(); got != 1 {
		t.Errorf("engine calls: got %d, want 1", got)
	}
	if got, want := w.recorded(), []string{"a.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded: got %q, want %q", got, want)
	}
	w.wantLines("1")
}

// TestRunDeletedWhileRead: an input that vanished while the engine read
// it fails that execution; the run executes again without it.
func TestRunDeletedWhileRead(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.write("b.csv", "2")
	w.fake.reading = func(call int, in engine.Input) {
		if call == 1 && in.Key == "b.csv" {
			_ = os.Remove(in.Location)
		}
	}
	res := w.run(RunOptions{})
	if got := w.fake.Calls(); got != 2 {
		t.Errorf("engine calls: got %d, want 2", got)
	}
	if got := res.Sources["in"]; files.CountDetailOf(got).Missing != 1 || got.Files != 1 || got.Rows != 1 {
		t.Errorf("source count: got %+v, want 1 file, 1 row, 1 missing", got)
	}
	if got, want := w.recorded(), []string{"a.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded: got %q, want %q", got, want)
	}
	w.wantLines("1")
}

// TestRunCleansDeadTemp: temporary folders a dead run of the job left in
// the spill folder are deleted; another job's are not, nor those of a job
// of the same name with another state store (another project on the host).
func TestRunCleansDeadTemp(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	r := &runner{job: jobName, st: w.store()}
	mine := filepath.Join(w.spill, r.tempPrefix()+"in-123")
	other := filepath.Join(w.spill, "tidemark_other@"+r.tmpTag+"@in-123")
	sameName := filepath.Join(w.spill, "tidemark_"+jobName+"@0badc0de@in-123")
	for _, d := range []string{mine, other, sameName} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.run(RunOptions{})
	want := []string{filepath.Base(other), filepath.Base(sameName)}
	slices.Sort(want)
	if got := w.spilled(); !slices.Equal(got, want) {
		t.Errorf("spill folder: got %q, want %q", got, want)
	}
}

func appendLine(t *testing.T, path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Error(err)
	}
}

// TestDeadTempOfAGlobName: a job name from code is not held to job:'s
// rule; one with glob characters deletes only its own dead runs' folders,
// not those of every job of the state store.
func TestDeadTempOfAGlobName(t *testing.T) {
	w := newWorld(t)
	r := &runner{job: "*", st: w.store(), spec: w.spec(), log: slog.New(slog.DiscardHandler)}
	mine := filepath.Join(w.spill, r.tempPrefix()+"in-123")
	other := filepath.Join(w.spill, "tidemark_"+jobName+"@"+r.tmpTag+"@in-123")
	for _, d := range []string{mine, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.cleanDeadTemp()
	if got, want := w.spilled(), []string{filepath.Base(other)}; !slices.Equal(got, want) {
		t.Errorf("spill folder: got %q, want %q", got, want)
	}
}
