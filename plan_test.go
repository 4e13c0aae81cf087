package tidemark

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// A store location of scheme "nostate" has no store yet: OpenExisting
// says store.ErrNoState, as a SQLite path without a file does.
func init() {
	store.Register("nostate", func(_ context.Context, loc string) (store.Store, error) {
		return memory.Open("memory://" + loc)
	})
	store.RegisterExisting("nostate", func(context.Context, string, bool) (store.Store, error) {
		return nil, store.ErrNoState
	})
}

// TestPlanFiles: Plan previews what the next run reads, before the first
// run (no store yet) and after it, and changes nothing.
func TestPlanFiles(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.write("b.csv", "2")
	w.state = "nostate://" + w.dir
	p, err := Plan(t.Context(), w.spec(), RunOptions{})
	if err != nil {
		t.Fatalf("plan with no state store: %v", err)
	}
	if got := p.Sources["in"]; got.Files != 2 || !slices.Equal(got.New, []string{"a.csv", "b.csv"}) || got.Bytes != 4 {
		t.Errorf("first plan: got %+v, want a.csv and b.csv new, 4 bytes", got)
	}
	if p.Job != jobName || p.Mode != bookmark.ModeEnable || p.Version != 0 {
		t.Errorf("first plan: got job %s mode %s version %d, want %s enable 0", p.Job, p.Mode, p.Version, jobName)
	}

	w.state = stateLocation(t, w.dir)
	if p, err = Plan(t.Context(), w.spec(), RunOptions{}); err != nil || p.Sources["in"].Files != 2 {
		t.Fatalf("plan on an empty store: got %+v (%v), want 2 files", p, err)
	}
	w.run(RunOptions{})
	w.write("c.csv", "3")
	p, err = Plan(t.Context(), w.spec(), RunOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if got := p.Sources["in"]; !slices.Equal(got.New, []string{"c.csv"}) || got.Unchanged != 2 {
		t.Errorf("plan after a run: got %+v, want c.csv new, 2 unchanged", got)
	}
	if p.Version != w.head() {
		t.Errorf("plan's version: got %d, want %d", p.Version, w.head())
	}
	if got := w.fake.Calls(); got != 1 {
		t.Errorf("engine calls: got %d, want 1 (plans run none)", got)
	}
	if got, want := w.recorded(), []string{"a.csv", "b.csv"}; !slices.Equal(got, want) {
		t.Errorf("recorded after plans: got %q, want %q", got, want)
	}
	p, err = Plan(t.Context(), w.spec(), RunOptions{Mode: bookmark.ModeDisable})
	if err != nil || p.Sources["in"].Files != 3 {
		t.Errorf("plan with bookmarks disabled: got %+v (%v), want all 3 files", p, err)
	}
}

// TestPlanUsage: a bad mode or range is a usage error for Plan and Run,
// before anything is recorded.
func TestPlanUsage(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	first := w.run(RunOptions{}).RunID
	for _, c := range []struct {
		name string
		opts RunOptions
		want string
	}{
		{"from without to", RunOptions{Mode: bookmark.ModePause, From: first}, "go together"},
		{"range outside pause", RunOptions{From: first, To: first}, "need --job-bookmark-option pause"},
		{"unknown from", RunOptions{Mode: bookmark.ModePause, From: "nope", To: first}, "--job-bookmark-from nope: no such run"},
		{"unknown to", RunOptions{Mode: bookmark.ModePause, From: first, To: "nope"}, "--job-bookmark-to nope: no such run"},
		{"to not after from", RunOptions{Mode: bookmark.ModePause, From: first, To: first}, "is not after"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Plan(t.Context(), w.spec(), c.opts)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("plan: got %v, want a usage error saying %q", err, c.want)
			}
			_, err = Run(t.Context(), w.spec(), c.opts)
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("run: got %v, want a usage error saying %q", err, c.want)
			}
		})
	}
	runs, err := w.store().Runs(t.Context(), jobName, store.RunQuery{})
	if err != nil || len(runs) != 1 {
		t.Errorf("runs: got %d (%v), want 1 (usage errors record none)", len(runs), err)
	}
}

// TestPauseRange: a pause run from/to re-reads exactly what the enable
// runs (from, to] read, and moves no bookmark.
func TestPauseRange(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	v := w.head()
	opts := RunOptions{Mode: bookmark.ModePause, From: ids[0], To: ids[1]}
	p, err := Plan(t.Context(), w.spec(), opts)
	if err != nil || !slices.Equal(p.Sources["in"].New, []string{"b.csv"}) {
		t.Errorf("plan of the range: got %+v (%v), want b.csv", p, err)
	}
	res := w.run(opts)
	if got := res.Sources["in"]; got.Files != 1 || got.Rows != 1 {
		t.Errorf("range run: got %+v, want b.csv alone", got)
	}
	if w.head() != v {
		t.Errorf("bookmark version: got %d, want %d (pause moves none)", w.head(), v)
	}
	w.wantLines("1", "2", "2", "3")
}

// TestDisable: with bookmarks disabled a run reads everything and commits
// no bookmark.
func TestDisable(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.run(RunOptions{})
	v := w.head()
	res := w.run(RunOptions{Mode: bookmark.ModeDisable})
	if got := res.Sources["in"].Files; got != 1 {
		t.Errorf("files read with bookmarks disabled: got %d, want 1", got)
	}
	if w.head() != v {
		t.Errorf("bookmark version: got %d, want %d", w.head(), v)
	}
	w.wantLines("1", "1")
}

// TestSourceChanged: a source whose definition changed under its ctx is
// refused before the run is recorded, unless AllowSourceChange.
func TestSourceChanged(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.run(RunOptions{})
	runs := func() int {
		rs, err := w.store().Runs(t.Context(), jobName, store.RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	spec := w.spec()
	spec.Sources[0].Config.(*srcfiles.Config).Format = "json"
	_, err := Run(t.Context(), spec, RunOptions{})
	var changed *source.ChangedError
	if !errors.As(err, &changed) || changed.Ctx != "in" {
		t.Fatalf("run: got %v, want a *source.ChangedError of source in", err)
	}
	if got := runs(); got != 1 {
		t.Errorf("runs: got %d, want 1 (the refused run is not recorded)", got)
	}
	w.write("b.csv", "2")
	if _, err := Run(t.Context(), spec, RunOptions{AllowSourceChange: true}); err != nil {
		t.Fatalf("run allowing the change: %v", err)
	}
	w.wantLines("1", "2")
}

// TestProgress: a run reports its processing phase, and the engine's
// progress when both can.
func TestProgress(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", "1")
	w.fake.waitPoll = true
	p := &progress{}
	w.run(RunOptions{Progress: p})
	if !slices.Contains(p.phases, "processing 1 files (2 B)") {
		t.Errorf("phases: got %q, want processing 1 files (2 B)", p.phases)
	}
	if p.engine == 0 {
		t.Error("engine progress never reported")
	}
}

// progress records what a run reports.
type progress struct {
	phases []string
	engine int
}

func (p *progress) Phase(name string, _, _ int64) { p.phases = append(p.phases, name) }
func (p *progress) Add(int64, int64)              {}
func (p *progress) Done()                         {}
func (p *progress) Engine(float64, int64)         { p.engine++ }

var _ source.Progress = (*progress)(nil)
