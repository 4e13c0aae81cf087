package tidemark

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
)

// The fake engine implements engine.Engine through its contract without
// DuckDB, so that the runner's tests can inject the faults a real engine
// cannot produce on demand. It reads every input as lines (no header, no
// types) and writes, per sink, one file holding the lines of the sink's
// source (of every source, for a transform) under the sink's Location. A
// line starting with "bad" is a bad record: it fails the execution with an
// *engine.InputError naming file and line, or is skipped, or quarantined
// under Rejects/<source ctx>, as the plan's policy says.

// fakeName is the engine kind job files of these tests name.
const fakeName = "fake"

// fakeConfig is the fake engine's block in the job file (engine: fake, or
// {fake: {spill_dir: ...}}): a job.Config and an engine.Options.
type fakeConfig struct {
	SpillDir string `yaml:"spill_dir" doc:"the run's temporary folder"`
	// Given is set by a Go caller on the block, not by the job file.
	Given string `yaml:"-"`
}

func (c *fakeConfig) ApplyDefaults(*job.Spec) {}
func (c *fakeConfig) Validate(*job.Check)     {}
func (c *fakeConfig) Check() error            { return nil }

// SpillFolder is where the run keeps its temporary folders.
func (c *fakeConfig) SpillFolder() string { return c.SpillDir }

// fakeEngine is the engine every run of the current test gets (see
// useFake). Its fields are the faults to inject; set them before the run.
type fakeEngine struct {
	mu      sync.Mutex
	calls   int           // Execute calls so far
	plans   []engine.Plan // every Execute's plan
	opened  int           // engines made
	closed  int           // engines closed
	polled  chan struct{} // closed on the first Progress call
	polling sync.Once

	// fail, if set, is asked at the start of every Execute (call counts
	// from 1); a non-nil error fails that call, having written nothing.
	fail func(call int) error
	// failWritten, if set, is asked once the sinks' files are written; a
	// non-nil error fails the call then.
	failWritten func(call int) error
	// reading, if set, is called for every input just before it is read
	// (a test changes or deletes the file there).
	reading func(call int, in engine.Input)
	// started, if set, receives the call number when Execute starts; with
	// release set, Execute then waits until release is closed (or its ctx
	// ends: then it fails with the ctx's cause).
	started chan int
	release chan struct{}
	// waitPoll makes Execute wait until Progress was called once.
	waitPoll bool
	// schema is reported as every source's schema.
	schema []bookmark.Column
	// writeNothing makes Execute write no file and report no rows for
	// any sink.
	writeNothing bool
	// opts is the options block the last engine was made from.
	opts engine.Options
}

// fake is the engine of the running test; nil outside useFake.
var fake *fakeEngine

func init() {
	engine.Register(engine.Kind{
		Name:    fakeName,
		Noun:    "the runner tests' fake engine",
		Options: func() engine.Options { return new(fakeConfig) },
		Open: func(o engine.Options, _ engine.Env) (engine.Engine, error) {
			if fake == nil {
				return nil, errors.New("fake engine used outside useFake")
			}
			fake.mu.Lock()
			defer fake.mu.Unlock()
			fake.opened++
			fake.opts = o
			return fakeHandle{fake}, nil
		},
	})
}

// useFake installs a fresh fake engine for the test.
func useFake(t *testing.T) *fakeEngine {
	t.Helper()
	f := &fakeEngine{polled: make(chan struct{})}
	fake = f
	t.Cleanup(func() { fake = nil })
	return f
}

// fakeHandle is one engine made from the fake: closing it is counted.
type fakeHandle struct{ *fakeEngine }

func (h fakeHandle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed++
	return nil
}

// Calls is how often Execute was called.
func (f *fakeEngine) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Capabilities: local files only.
func (f *fakeEngine) Capabilities() engine.Caps {
	return engine.Caps{Read: []string{"file"}, Write: []string{"file"}}
}

// Progress reports a fixed progress while the test waits for it.
func (f *fakeEngine) Progress() (engine.Progress, bool) {
	f.polling.Do(func() { close(f.polled) })
	return engine.Progress{Percent: 50, Rows: 1}, true
}

// Execute copies lines as the type comment says, injecting the faults set.
func (f *fakeEngine) Execute(ctx context.Context, p engine.Plan) (engine.Result, error) {
	f.mu.Lock()
	f.calls++
	call := f.calls
	f.plans = append(f.plans, p)
	f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(call); err != nil {
			return engine.Result{}, err
		}
	}
	if f.started != nil {
		f.started <- call
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return engine.Result{}, fmt.Errorf("fake engine: %w", context.Cause(ctx))
		}
	}
	if f.waitPoll {
		<-f.polled
	}
	// The contract: nothing exists at a sink's Location before Execute
	// (a retry's caller deleted what the last execution wrote).
	for _, k := range p.Sinks {
		if local, err := engine.LocalPath(k.Location); err == nil {
			if _, err := os.Stat(local); err == nil {
				return engine.Result{}, fmt.Errorf("fake engine: sink %s: location %s exists before Execute", k.Ctx, local)
			}
		}
	}
	res := engine.Result{Sources: map[string]engine.SourceResult{}, Sinks: map[string]engine.SinkResult{}}
	rows := map[string][]string{}
	for _, s := range p.Sources {
		lines, sr, err := f.read(call, s, p)
		if err != nil {
			return engine.Result{}, err
		}
		rows[s.Ctx] = lines
		res.Sources[s.Ctx] = sr
	}
	for _, k := range p.Sinks {
		if f.writeNothing {
			res.Sinks[k.Ctx] = engine.SinkResult{}
			continue
		}
		lines, ok := rows[k.From]
		if !ok { // a transform: every source's rows
			for _, s := range p.Sources {
				lines = append(lines, rows[s.Ctx]...)
			}
		}
		sr, err := writeLines(k.Location, "part-0."+k.Format, lines)
		if err != nil {
			return engine.Result{}, err
		}
		res.Sinks[k.Ctx] = sr
	}
	if f.failWritten != nil {
		if err := f.failWritten(call); err != nil {
			return engine.Result{}, err
		}
	}
	return res, nil
}

// read returns a source's good lines and its result; bad lines are
// handled by the plan's policy.
func (f *fakeEngine) read(call int, s engine.Source, p engine.Plan) ([]string, engine.SourceResult, error) {
	sr := engine.SourceResult{Schema: f.schema}
	var good, rejected []string
	for _, in := range s.Files {
		if f.reading != nil {
			f.reading(call, in)
		}
		path, err := engine.LocalPath(in.Location)
		if err != nil {
			return nil, sr, err
		}
		file, err := os.Open(path)
		if err != nil {
			return nil, sr, fmt.Errorf("fake engine: reading %s: %w", in.Key, err)
		}
		sc := bufio.NewScanner(file)
		for n := int64(1); sc.Scan(); n++ {
			line := sc.Text()
			if !strings.HasPrefix(line, "bad") {
				good = append(good, line)
				continue
			}
			switch p.OnBadRecord {
			case engine.BadSkip:
				sr.Rejected++
			case engine.BadQuarantine:
				sr.Rejected++
				rejected = append(rejected, line)
			default:
				file.Close()
				return nil, sr, &engine.InputError{Source: s.Ctx, File: in.Key, Line: n, Msg: "bad record"}
			}
		}
		file.Close()
		if err := sc.Err(); err != nil {
			return nil, sr, err
		}
	}
	if len(rejected) > 0 {
		if _, err := writeLines(filepath.Join(p.Rejects, s.Ctx), "rejects.csv", rejected); err != nil {
			return nil, sr, err
		}
	}
	sr.Rows = int64(len(good))
	return good, sr, nil
}

// writeLines writes lines to dir/name and reports it as a sink's result.
func writeLines(dir, name string, lines []string) (engine.SinkResult, error) {
	local, err := engine.LocalPath(dir)
	if err != nil {
		return engine.SinkResult{}, err
	}
	if err := os.MkdirAll(local, 0o755); err != nil {
		return engine.SinkResult{}, err
	}
	data := ""
	for _, l := range lines {
		data += l + "\n"
	}
	if err := os.WriteFile(filepath.Join(local, name), []byte(data), 0o644); err != nil {
		return engine.SinkResult{}, err
	}
	n := int64(len(lines))
	return engine.SinkResult{Rows: n, Files: []engine.StagedFile{{Path: name, Rows: n, Bytes: int64(len(data))}}}, nil
}

// TestEngineGetsItsJobBlock: the engine is made from the job's engine
// block itself, not from a copy re-encoded through its yaml keys, so what
// a Go caller set on the block reaches the engine.
func TestEngineGetsItsJobBlock(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	spec := w.spec()
	cfg := spec.Engine.Config.(*fakeConfig)
	cfg.Given = "set in code"
	if _, err := Run(context.Background(), spec, RunOptions{}); err != nil {
		t.Fatalf("run: %v", err)
	}
	got, ok := w.fake.opts.(*fakeConfig)
	if !ok || got != cfg {
		t.Fatalf("engine made from %#v, want the job's block %#v", w.fake.opts, cfg)
	}
	if got.Given != "set in code" {
		t.Fatalf("Given = %q, want %q", got.Given, "set in code")
	}
}
