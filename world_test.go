package tidemark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/store"
	_ "github.com/tidemark-etl/tidemark/store/memory"
)

// world is one job of a runner test: an input folder, a sink folder, a
// state store and a spill folder, all in a temporary folder, run on the
// fake engine.
type world struct {
	t     *testing.T
	dir   string
	in    string // the source folder
	out   string // the sink folder
	spill string
	state string // the state location
	fake  *fakeEngine
	// sinkMode is the sink's mode: (append), overwrite.
	sinkMode string
	// onBad is the source's on_bad_record ("": the default, fail).
	onBad string
	// top and srcExtra are extra lines of the job file and of its
	// source (batch_files: 2, tracking: timestamp).
	top, srcExtra []string
}

const jobName = "j"

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, in: filepath.Join(dir, "in"), out: filepath.Join(dir, "out"),
		spill: filepath.Join(dir, "spill"), state: stateLocation(t, dir), fake: useFake(t)}
	for _, d := range []string{w.in, w.spill} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// stateLocation is where a test's state store is: an in-memory store of
// its own.
func stateLocation(_ *testing.T, dir string) string { return "memory://" + dir }

// spec parses the job file of the world.
func (w *world) spec() *job.Spec {
	w.t.Helper()
	src := fmt.Sprintf("  - ctx: in\n    path: %s\n    format: csv\n", w.in)
	if w.onBad != "" {
		src += "    on_bad_record: " + w.onBad + "\n"
	}
	for _, l := range w.srcExtra {
		src += "    " + l + "\n"
	}
	snk := fmt.Sprintf("  - ctx: out\n    path: %s\n    format: csv\n", w.out)
	if w.sinkMode != "" {
		snk += "    mode: " + w.sinkMode + "\n"
	}
	yml := fmt.Sprintf("job: %s\nstate: %s\nengine: {fake: {spill_dir: %s}}\n%ssources:\n%ssinks:\n%s",
		jobName, w.state, w.spill, lines(w.top), src, snk)
	path := filepath.Join(w.dir, "job.yaml")
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		w.t.Fatal(err)
	}
	s, err := job.Load(path)
	if err != nil {
		w.t.Fatalf("job file: %v\n%s", err, yml)
	}
	return s
}

// lines joins job-file lines, each ending in a newline.
func lines(ls []string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// write makes input file name with the given lines.
func (w *world) write(name string, lines ...string) {
	w.t.Helper()
	p := filepath.Join(w.in, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	// An mtime in the past: the run need not wait for the file's clock
	// tick to pass before it stamps it.
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(p, old, old); err != nil {
		w.t.Fatal(err)
	}
}

// run runs the job and fails the test on error.
func (w *world) run(opts RunOptions) *Result {
	w.t.Helper()
	res, err := Run(context.Background(), w.spec(), opts)
	if err != nil {
		w.t.Fatalf("run: %v", err)
	}
	return res
}

// runErr runs the job and expects it to fail.
func (w *world) runErr(opts RunOptions) (*Result, error) {
	w.t.Helper()
	res, err := Run(context.Background(), w.spec(), opts)
	if err == nil {
		w.t.Fatalf("run succeeded, want an error")
	}
	return res, err
}

// crash is the panic of a simulated crash at a fault step.
type crash struct{ step string }

// runCrashing runs the job, crashing it (a panic from fault.Hook) at step;
// before, if set, is called there first.
func (w *world) runCrashing(step string, before func()) {
	w.t.Helper()
	fault.Hook = func(s string) {
		if s == step {
			if before != nil {
				before()
			}
			panic(crash{s})
		}
	}
	defer func() { fault.Hook = nil }()
	defer func() {
		r := recover()
		if _, ok := r.(crash); !ok {
			w.t.Fatalf("run did not crash at %s: recovered %v", step, r)
		}
	}()
	_, err := Run(context.Background(), w.spec(), RunOptions{})
	w.t.Fatalf("run did not reach %s: %v", step, err)
}

// at sets fault.Hook to call f at step for the test.
func at(t *testing.T, step string, f func()) {
	fault.Hook = func(s string) {
		if s == step {
			f()
		}
	}
	t.Cleanup(func() { fault.Hook = nil })
}

// store opens the world's state store.
func (w *world) store() store.Store {
	w.t.Helper()
	st, err := store.Open(context.Background(), w.state)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { st.Close() })
	return st
}

// head is the job's bookmark version.
func (w *world) head() int64 {
	w.t.Helper()
	h, err := w.store().Head(context.Background(), jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	return h.Version
}

// runRecord reads one run's record.
func (w *world) runRecord(id string) store.Run {
	w.t.Helper()
	r, err := w.store().Run(context.Background(), jobName, id)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// recorded are the files of source "in" the bookmark holds.
func (w *world) recorded() []string {
	w.t.Helper()
	var paths []string
	for f, err := range w.store().Files(context.Background(), jobName, "in") {
		if err != nil {
			w.t.Fatal(err)
		}
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	return paths
}

// published returns the lines of the sink's published files, sorted, and
// the files' names relative to the sink folder.
func (w *world) published() (lines, files []string) {
	w.t.Helper()
	err := filepath.WalkDir(w.out, func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "_") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(w.out, p)
		files = append(files, rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	slices.Sort(lines)
	slices.Sort(files)
	return lines, files
}

// staged lists what is left under the sink's staging folder.
func (w *world) staged() []string {
	w.t.Helper()
	var left []string
	_ = filepath.WalkDir(filepath.Join(w.out, "_tidemark", "staging"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	return left
}

// spilled lists what is left in the spill folder.
func (w *world) spilled() []string {
	w.t.Helper()
	ents, err := os.ReadDir(w.spill)
	if err != nil {
		w.t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// wantLines fails the test unless the sink's published lines are want.
func (w *world) wantLines(want ...string) {
	w.t.Helper()
	got, files := w.published()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		w.t.Errorf("published lines: got %q, want %q (files %q)", got, want, files)
	}
}
