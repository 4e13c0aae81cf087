package sourcetest

import (
	"encoding/csv"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"

	_ "github.com/tidemark-etl/tidemark/sink/files" // the job's sink
)

// jobName is the job every case runs; ctx is its source's ctx.
const (
	jobName = "sourcetest"
	ctx     = "in"
)

// world is one case's input, state store and engine.
type world struct {
	t     *testing.T
	in    Input
	st    store.Store
	eng   engine.Engine
	lease store.Lease
	log   *slog.Logger
	clock time.Time
	runs  int
}

func newWorld(t *testing.T, k Kind, s sinktest.Store) *world {
	t.Helper()
	w := &world{t: t, st: s.Open(t), eng: k.Engine(t), log: slog.New(slog.DiscardHandler),
		clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if k.NewIn != nil {
		w.in = k.NewIn(t, w.st)
	} else {
		w.in = k.New(t)
	}
	t.Cleanup(func() { w.eng.Close() })
	l, err := w.st.AcquireLease(t.Context(), jobName, store.Holder{ID: "sourcetest", Host: "sourcetest", PID: 1,
		Started: w.clock}, time.Hour)
	if err != nil {
		t.Fatalf("taking the job's lease: %v", err)
	}
	w.lease = l
	return w
}

// source opens the job's source as block defines it.
func (w *world) source(block func(string) string) source.Source {
	w.t.Helper()
	dir := w.t.TempDir()
	text := fmt.Sprintf("job: %s\nsources:\n%s\nsinks:\n  - ctx: out\n    path: %s\n    format: csv\n",
		jobName, block(ctx), filepath.Join(dir, "out"))
	spec, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(text))
	if err != nil {
		w.t.Fatalf("parsing the job:\n%s\n%v", text, err)
	}
	s, err := source.Open(w.t.Context(), spec, spec.Sources[0])
	if err != nil {
		w.t.Fatalf("opening the source: %v", err)
	}
	w.t.Cleanup(func() { s.Close() })
	return s
}

// prev is the source's state in the bookmark.
func (w *world) prev() (bookmark.SourceState, bool) {
	w.t.Helper()
	states, err := w.st.SourceStates(w.t.Context(), jobName)
	if err != nil {
		w.t.Fatalf("reading the bookmark: %v", err)
	}
	s, ok := states[ctx]
	return s, ok
}

// plan checks the source's definition against the bookmark and plans a
// run.
func (w *world) plan(s source.Source) source.Plan {
	w.t.Helper()
	return w.planCounting(s, false)
}

// planCounting is plan; with count it plans as `tidemark plan` does,
// counting what is new.
func (w *world) planCounting(s source.Source, count bool) source.Plan {
	w.t.Helper()
	prev, has := w.prev()
	if has {
		if err := s.CheckDefinition(w.t.Context(), prev); err != nil {
			w.t.Fatalf("checking the definition: %v", err)
		}
	}
	w.clock = w.clock.Add(time.Minute)
	p, err := s.Plan(w.t.Context(), source.Request{Job: jobName, Mode: bookmark.ModeEnable, State: w.st, Prev: prev,
		HasPrev: has, Now: time.Now(), Count: count})
	if err != nil {
		w.t.Fatalf("planning: %v", err)
	}
	return p
}

// execute reads p once with the engine, calling during between the
// plan's Open and the engine's read, and settles it with Done. It returns
// the rows read ("ID:V").
func (w *world) execute(p source.Plan, last bool, during func()) (rows []string, res engine.SourceResult, retry bool, err error) {
	w.t.Helper()
	tmp := w.t.TempDir()
	rd, err := p.Open(w.t.Context(), source.Env{Caps: w.eng.Capabilities(), Policy: engine.BadFail, Concurrency: 2,
		Log: w.log, TempDir: func() (string, error) { return tmp, nil }})
	if err != nil {
		return nil, res, false, fmt.Errorf("opening the plan: %w", err)
	}
	if during != nil {
		during()
	}
	out := filepath.Join(w.t.TempDir(), "out")
	r, engErr := w.eng.Execute(w.t.Context(), engine.Plan{Sources: []engine.Source{rd.Input()},
		Sinks:       []engine.Sink{{Ctx: "out", From: ctx, Format: "csv", Location: out}},
		OnBadRecord: engine.BadFail})
	res = r.Sources[ctx]
	retry, err = rd.Done(w.t.Context(), engErr, res, last)
	if retry && last {
		w.t.Fatalf("Done asked for a retry on the last attempt")
	}
	if err == nil && !retry {
		err = engErr
	}
	if err != nil || retry {
		return nil, res, retry, err
	}
	for _, f := range r.Sinks["out"].Files {
		rows = append(rows, readCSV(w.t, filepath.Join(out, filepath.FromSlash(f.Path)))...)
	}
	return rows, res, false, nil
}

func readCSV(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var rows []string
	for i, r := range recs {
		if i == 0 {
			continue // the header
		}
		rows = append(rows, strings.Join(r, ":"))
	}
	return rows
}

// commit commits an enable run that read p with result res, and returns
// what it advanced.
func (w *world) commit(p source.Plan, res engine.SourceResult) source.Advance {
	w.t.Helper()
	c := w.t.Context()
	w.runs++
	id := fmt.Sprintf("%s-%06x", w.clock.Format("20060102T150405Z"), w.runs)
	r, err := w.st.BeginRun(c, w.lease.Token, store.Run{Job: jobName, RunID: id, Mode: bookmark.ModeEnable, StartedAt: w.clock})
	if err != nil {
		w.t.Fatalf("beginning run %s: %v", id, err)
	}
	head, err := w.st.Head(c, jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	states, err := w.st.SourceStates(c, jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	if states == nil {
		states = map[string]bookmark.SourceState{}
	}
	r.Status, r.FinishedAt = store.StatusSucceeded, w.clock.Add(time.Second)
	r.Sources = map[string]store.Count{ctx: p.Count(&res)}
	cm := store.Commit{Job: jobName, Token: w.lease.Token, BaseVersion: head.Version, Advance: true, Run: r, Sources: states}
	a, ok := p.Advance(id, res)
	if ok {
		states[ctx] = a.State
		cm.Added, cm.Superseded, cm.Ranges = a.Added, a.Superseded, a.Ranges
	}
	if _, err := w.st.Commit(c, cm); err != nil {
		w.t.Fatalf("committing run %s: %v", id, err)
	}
	return a
}

// run plans, reads and commits one run as the runner does, retrying as
// Done asks; it returns the rows read, or the run's error (nothing is
// committed then).
func (w *world) run(s source.Source, during func()) ([]string, error) {
	w.t.Helper()
	p := w.plan(s)
	if p.Pending() == 0 {
		return nil, nil
	}
	for attempt := 1; ; attempt++ {
		rows, res, retry, err := w.execute(p, attempt == source.MaxAttempts, during)
		during = nil
		if retry {
			continue
		}
		if err != nil {
			return nil, err
		}
		w.commit(p, res)
		return rows, nil
	}
}

// mustRun is run that fails the test on error.
func (w *world) mustRun(s source.Source) []string {
	w.t.Helper()
	rows, err := w.run(s, nil)
	if err != nil {
		w.t.Fatalf("run: %v", err)
	}
	return rows
}

// equal fails the test unless got and want hold the same rows (any order).
func (w *world) equal(what string, got, want []string) {
	w.t.Helper()
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		w.t.Fatalf("%s: read %q, want %q", what, got, want)
	}
}
