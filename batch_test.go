package tidemark

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/store"
)

// writeN makes n input files f00.csv... of one line each ("0", "1", ...),
// each a second older than the next, and returns their lines.
func (w *world) writeN(n int) []string {
	w.t.Helper()
	var want []string
	base := time.Now().Add(-time.Hour)
	for i := range n {
		name := fmt.Sprintf("f%02d.csv", i)
		w.write(name, fmt.Sprint(i))
		at := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(filepath.Join(w.in, name), at, at); err != nil {
			w.t.Fatal(err)
		}
		want = append(want, fmt.Sprint(i))
	}
	return want
}

// runs are the job's run records, oldest first.
func (w *world) runs() []store.Run {
	w.t.Helper()
	all, err := store.AllRuns(context.Background(), w.store(), jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Reverse(all)
	return all
}

// TestBatchedRun: a run over more new files than batch_files executes,
// commits and publishes them in batches of that many, oldest first: each
// batch a run record and a bookmark version of its own, the first under
// the run's id. run's result sums them and lists them.
func TestBatchedRun(t *testing.T) {
	w := newWorld(t)
	w.top = []string{"batch_files: 3"}
	w.fake.schema = []bookmark.Column{{Name: "line", Type: "VARCHAR"}}
	want := w.writeN(7)
	res := w.run(RunOptions{})

	if got, want := res.Sources["in"], (store.Count{Files: 7, Bytes: 14, Rows: 7}); got != want {
		t.Errorf("source count: got %+v, want %+v", got, want)
	}
	if got := res.Sinks["out"]; got.Files != 3 || got.Rows != 7 {
		t.Errorf("sink count: got %+v, want 3 files (one a batch), 7 rows", got)
	}
	ids := []string{res.RunID, res.RunID + "-b0002", res.RunID + "-b0003"}
	var got []string
	for i, b := range res.Batches {
		got = append(got, b.RunID)
		if b.Status != store.StatusSucceeded || b.Version != int64(i+1) || b.Files != []int64{3, 3, 1}[i] {
			t.Errorf("batch %d: got %+v, want succeeded at version %d", i+1, b, i+1)
		}
	}
	if !slices.Equal(got, ids) {
		t.Errorf("batches: got %q, want %q", got, ids)
	}
	if res.Version != 3 || w.head() != 3 {
		t.Errorf("version: got %d (head %d), want 3", res.Version, w.head())
	}
	w.wantLines(want...)
	// Each batch is its own run, oldest files first, with what it read.
	runs := w.runs()
	if len(runs) != 3 {
		t.Fatalf("run records: got %d, want 3", len(runs))
	}
	for i, r := range runs {
		files := w.runFiles(r.RunID)
		wantFiles := []string{"f00.csv", "f01.csv", "f02.csv", "f03.csv", "f04.csv", "f05.csv", "f06.csv"}[3*i : min(3*i+3, 7)]
		if r.RunID != ids[i] || r.Status != store.StatusSucceeded || r.Version != int64(i+1) || !slices.Equal(files, wantFiles) {
			t.Errorf("run record %d: got %s %s version %d files %q, want %s succeeded at %d with %q",
				i+1, r.RunID, r.Status, r.Version, files, ids[i], i+1, wantFiles)
		}
	}
	// The engine got each batch alone; the later ones read with the
	// schema the first committed.
	if n := len(w.fake.plans); n != 3 {
		t.Fatalf("engine executions: got %d, want 3", n)
	}
	for i, p := range w.fake.plans {
		if got, want := len(p.Sources[0].Files), []int{3, 3, 1}[i]; got != want {
			t.Errorf("execution %d: got %d files, want %d", i+1, got, want)
		}
		if got := len(p.Sources[0].Schema); (i == 0) != (got == 0) {
			t.Errorf("execution %d: given a schema of %d columns, want one from the second batch on", i+1, got)
		}
	}
	if left := w.spilled(); len(left) > 0 {
		t.Errorf("spill folder left after the run: %q", left)
	}
	// Nothing is read again.
	if res := w.run(RunOptions{}); res.Sources["in"].Files != 0 || len(res.Batches) != 0 {
		t.Errorf("the next run: got %+v and %d batches, want nothing read in one batch", res.Sources["in"], len(res.Batches))
	}
}

// runFiles are the files a run recorded, sorted.
func (w *world) runFiles(runID string) []string {
	w.t.Helper()
	var paths []string
	for r, err := range w.store().RunInputs(context.Background(), jobName, []string{runID}) {
		if err != nil {
			w.t.Fatal(err)
		}
		paths = append(paths, r.File.Path)
	}
	slices.Sort(paths)
	return paths
}

// TestBatchedRunCrashResumes: a run killed after its second batch (or
// while staging its third) keeps the batches it committed, published;
// the next run reads only the rest, and every line is in the sink once.
func TestBatchedRunCrashResumes(t *testing.T) {
	for _, tc := range []struct {
		step      string
		at        int // the occurrence of step that crashes
		published int // lines in the sink after the crash
	}{
		{fault.AfterBatch, 2, 4},
		{fault.AfterStage, 3, 4},
		{fault.AfterCommit, 2, 2}, // batch 2 committed, not published: rolled forward
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.step, tc.at), func(t *testing.T) {
			w := newWorld(t)
			w.top = []string{"batch_files: 2"}
			want := w.writeN(7)
			w.crashAt(tc.step, tc.at)
			if got, _ := w.published(); len(got) != tc.published {
				t.Errorf("after the crash: %d lines published, want %d", len(got), tc.published)
			}
			res := w.run(RunOptions{})
			w.wantLines(want...)
			if got, want := res.Sources["in"].Files, int64(3); got != want {
				t.Errorf("rerun: read %d files, want %d (the batches not committed)", got, want)
			}
			if got, want := w.recorded(), []string{"f00.csv", "f01.csv", "f02.csv", "f03.csv", "f04.csv", "f05.csv", "f06.csv"}; !slices.Equal(got, want) {
				t.Errorf("recorded files: got %q, want %q", got, want)
			}
			for _, r := range w.runs() {
				if r.Status == store.StatusRunning {
					t.Errorf("run %s still running after the rerun", r.RunID)
				}
			}
		})
	}
}

// crashAt runs the job, crashing it at the n-th time it reaches step.
func (w *world) crashAt(step string, n int) {
	w.t.Helper()
	seen := 0
	fault.Hook = func(s string) {
		if s == step {
			if seen++; seen == n {
				panic(crash{s})
			}
		}
	}
	defer func() { fault.Hook = nil }()
	defer func() {
		if r := recover(); r == nil {
			w.t.Fatalf("run did not crash at %s #%d", step, n)
		} else if _, ok := r.(crash); !ok {
			panic(r)
		}
	}()
	_, err := Run(context.Background(), w.spec(), RunOptions{})
	w.t.Fatalf("run did not reach %s #%d: %v", step, n, err)
}

// TestBatchedTimestampTracking: with timestamp tracking each batch's high-
// water mark stays behind the files of the batches after it, so a crash
// between batches loses none of them.
func TestBatchedTimestampTracking(t *testing.T) {
	w := newWorld(t)
	w.top = []string{"batch_files: 2"}
	w.srcExtra = []string{"tracking: timestamp", "max_band: 1ms"}
	want := w.writeN(5)
	w.crashAt(fault.AfterBatch, 1)
	res := w.run(RunOptions{})
	if got := res.Sources["in"].Files; got != 3 {
		t.Errorf("rerun: read %d files, want 3", got)
	}
	w.wantLines(want...)
	if res := w.run(RunOptions{}); res.Sources["in"].Files != 0 {
		t.Errorf("the next run read %d files, want 0", res.Sources["in"].Files)
	}
}

// TestBatchedModes: pause and disable runs read in batches too, publish
// each batch and leave the bookmark alone.
func TestBatchedModes(t *testing.T) {
	for _, mode := range []bookmark.Mode{bookmark.ModePause, bookmark.ModeDisable} {
		t.Run(string(mode), func(t *testing.T) {
			w := newWorld(t)
			w.top = []string{"batch_files: 2"}
			want := w.writeN(5)
			res := w.run(RunOptions{Mode: mode})
			if len(res.Batches) != 3 || res.Sources["in"].Files != 5 {
				t.Errorf("got %d batches, %d files, want 3 batches, 5 files", len(res.Batches), res.Sources["in"].Files)
			}
			w.wantLines(want...)
			if w.head() != 0 || len(w.recorded()) != 0 {
				t.Errorf("bookmark after a %s run: version %d, %d files, want untouched", mode, w.head(), len(w.recorded()))
			}
			for _, r := range w.runs() {
				if r.Mode != mode || r.Status != store.StatusSucceeded {
					t.Errorf("run %s: got %s %s, want %s succeeded", r.RunID, r.Mode, r.Status, mode)
				}
			}
		})
	}
}

// TestOneBatchWhenSinkOverwrites: a sink that replaces what it holds makes
// the run one batch (each batch would replace the one before); so does
// batch_files: 0.
func TestOneBatchWhenSinkOverwrites(t *testing.T) {
	for name, w := range map[string]*world{"overwrite": nil, "batch_files: 0": nil} {
		t.Run(name, func(t *testing.T) {
			w = newWorld(t)
			w.top = []string{"batch_files: 2"}
			if name == "overwrite" {
				w.sinkMode = "overwrite"
			} else {
				w.top = []string{name}
			}
			want := w.writeN(5)
			res := w.run(RunOptions{})
			if len(res.Batches) != 0 || len(w.fake.plans) != 1 || w.head() != 1 {
				t.Errorf("got %d batches, %d executions, version %d; want one run at version 1", len(res.Batches), len(w.fake.plans), w.head())
			}
			w.wantLines(want...)
		})
	}
}

// TestBatchFailsLater: a batch that fails leaves the batches before it
// committed and published and fails the run (exit 1); the failed batch's
// record says why; the next run reads the rest.
func TestBatchFailsLater(t *testing.T) {
	w := newWorld(t)
	w.top = []string{"batch_files: 2"}
	want := w.writeN(5)
	w.fake.fail = func(call int) error {
		if call == 2 {
			return fmt.Errorf("disk full")
		}
		return nil
	}
	res, err := w.runErr(RunOptions{})
	if res.Status != store.StatusFailed || len(res.Batches) != 2 || res.Version != 1 {
		t.Fatalf("got status %s, %d batches, version %d (%v); want failed, 2 batches, version 1", res.Status, len(res.Batches), res.Version, err)
	}
	if b := res.Batches[1]; b.Status != store.StatusFailed || b.Error == "" {
		t.Errorf("second batch: got %+v, want failed with its error", b)
	}
	if r := w.runRecord(res.Batches[1].RunID); r.Status != store.StatusFailed {
		t.Errorf("second batch's record: got %s, want failed", r.Status)
	}
	if got, _ := w.published(); len(got) != 2 {
		t.Errorf("after the failure: %d lines published, want the first batch's 2", len(got))
	}
	w.fake.fail = nil
	if res := w.run(RunOptions{}); res.Sources["in"].Files != 3 {
		t.Errorf("the next run read %d files, want 3", res.Sources["in"].Files)
	}
	w.wantLines(want...)
}
