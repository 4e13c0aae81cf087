package sinktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"

	_ "github.com/tidemark-etl/tidemark/source/files" // the job's source
)

// jobName is the job every case runs; ctx is its sink's ctx.
const (
	jobName = "sinktest"
	ctx     = "out"
)

// world is one case's sink location, state store and engine.
type world struct {
	t     *testing.T
	k     Kind
	p     Place
	open  func(t *testing.T) store.Store
	st    store.Store
	eng   engine.Engine
	lease store.Lease
	log   *slog.Logger
	clock time.Time
}

func newWorld(t *testing.T, k Kind, s Store) *world {
	t.Helper()
	w := &world{t: t, k: k, p: k.New(t), open: s.Open, st: s.Open(t), eng: k.Engine(t),
		log: slog.New(slog.NewTextHandler(testWriter{t}, nil)), clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	t.Cleanup(func() { w.eng.Close() })
	l, err := w.st.AcquireLease(t.Context(), jobName, store.Holder{ID: "sinktest", Host: "sinktest", PID: 1,
		Started: w.clock}, time.Hour)
	if err != nil {
		t.Fatalf("taking the job's lease: %v", err)
	}
	w.lease = l
	return w
}

// testWriter sends a logger's lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// spec parses the job with the sink in mode.
func (w *world) spec(mode string) *job.Spec {
	w.t.Helper()
	dir := w.t.TempDir()
	text := fmt.Sprintf("job: %s\nsources:\n  - ctx: in\n    path: %s\n    format: csv\nsinks:\n%s\n",
		jobName, filepath.Join(dir, "in"), w.p.Block(ctx, mode))
	s, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(text))
	if err != nil {
		w.t.Fatalf("parsing the job:\n%s\n%v", text, err)
	}
	return s
}

// sink opens the job's sink in mode.
func (w *world) sink(mode string) sink.Sink {
	w.t.Helper()
	s := w.spec(mode)
	k, err := sink.Open(w.t.Context(), s, s.Sinks[0])
	if err != nil {
		w.t.Fatalf("opening the sink: %v", err)
	}
	w.t.Cleanup(func() { k.Close() })
	return k
}

// begin records a new enable run and returns its id.
func (w *world) begin() string {
	w.t.Helper()
	w.clock = w.clock.Add(time.Minute)
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := w.clock.Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
	if _, err := w.st.BeginRun(w.t.Context(), w.lease.Token, store.Run{Job: jobName, RunID: id,
		Mode: bookmark.ModeEnable, StartedAt: w.clock}); err != nil {
		w.t.Fatalf("beginning run %s: %v", id, err)
	}
	return id
}

// claimWith is the claim a run of the job makes through st.
func (w *world) claimWith(st store.Store, runID string, checkOnly bool) sink.Claim {
	w.t.Helper()
	id, err := st.Identity(w.t.Context())
	if err != nil {
		w.t.Fatal(err)
	}
	head, err := st.Head(w.t.Context(), jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	return sink.Claim{Job: jobName, Identity: id, Version: head.Version, Mode: bookmark.ModeEnable, RunID: runID,
		CheckOnly: checkOnly, Log: w.log, Known: func(ctx context.Context, runID string) (bool, error) {
			_, err := st.Run(ctx, jobName, runID)
			if errors.Is(err, store.ErrNotFound) {
				return false, nil
			}
			return err == nil, err
		}}
}

// claim claims k for runID through the case's store, or fails the test.
func (w *world) claim(k sink.Sink, runID string) {
	w.t.Helper()
	if err := k.Claim(w.t.Context(), w.claimWith(w.st, runID, false)); err != nil {
		w.t.Fatalf("claiming the sink for run %s: %v", runID, err)
	}
}

// prepare readies k's staging area for runID.
func (w *world) prepare(k sink.Sink, runID string) sink.Staging {
	w.t.Helper()
	tmp := w.t.TempDir()
	stg, err := k.Prepare(w.t.Context(), sink.Run{ID: runID, Concurrency: 2, Engine: w.eng.Capabilities(),
		Log: w.log, Catalog: w.st, TempDir: func(pattern string) (string, error) { return os.MkdirTemp(tmp, pattern) }})
	if err != nil {
		w.t.Fatalf("preparing run %s: %v", runID, err)
	}
	return stg
}

// write has the engine write rows ("ID:V") into stg as a run would.
func (w *world) write(stg sink.Staging, rows ...string) engine.SinkResult {
	w.t.Helper()
	in := filepath.Join(w.t.TempDir(), "in.csv")
	text := "id,v\n"
	for _, r := range rows {
		id, v, _ := strings.Cut(r, ":")
		text += id + "," + v + "\n"
	}
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
	src := engine.Source{Ctx: "in", Format: "csv", Options: map[string]any{"header": true},
		Files: []engine.Input{{Location: in, Key: "in.csv", Size: int64(len(text))}}}
	src.Schema = []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "VARCHAR"}}
	target := stg.Target()
	stg.EngineStarted(w.t.Context())
	res, err := w.eng.Execute(w.t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{target},
		OnBadRecord: engine.BadFail})
	stg.EngineReturned(w.t.Context(), err)
	if err != nil {
		w.t.Fatalf("the engine's write: %v", err)
	}
	return res.Sinks[target.Ctx]
}

// stage prepares, writes and stages rows for runID.
func (w *world) stage(k sink.Sink, runID string, rows ...string) (sink.Staging, sink.Staged) {
	w.t.Helper()
	stg := w.prepare(k, runID)
	res := w.write(stg, rows...)
	staged, err := stg.Stage(w.t.Context(), res, false)
	if err != nil {
		stg.Discard(w.t.Context())
		w.t.Fatalf("staging run %s: %v", runID, err)
	}
	return stg, staged
}

// commit commits runID with what it staged.
func (w *world) commit(runID string, staged sink.Staged) {
	w.t.Helper()
	head, err := w.st.Head(w.t.Context(), jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	r, err := w.st.Run(w.t.Context(), jobName, runID)
	if err != nil {
		w.t.Fatal(err)
	}
	r.Status, r.FinishedAt = store.StatusSucceeded, w.clock.Add(time.Second)
	r.Sinks = map[string]store.Count{ctx: staged.Count}
	if _, err := w.st.Commit(w.t.Context(), store.Commit{Job: jobName, Token: w.lease.Token, BaseVersion: head.Version,
		Advance: true, Run: r, Sources: map[string]bookmark.SourceState{}, Outputs: staged.Outputs,
		Actions: staged.Actions, Catalog: staged.Catalog}); err != nil {
		w.t.Fatalf("committing run %s: %v", runID, err)
	}
}

// run claims, stages, commits and publishes one run of rows.
func (w *world) run(k sink.Sink, rows ...string) string {
	w.t.Helper()
	id := w.begin()
	w.claim(k, id)
	_, staged := w.stage(k, id, rows...)
	w.commit(id, staged)
	if err := w.publish(id, true); err != nil {
		w.t.Fatalf("publishing run %s: %v", id, err)
	}
	return id
}

// locations opens the places runID's outputs and actions are at, as the
// runner's publish groups them.
func (w *world) locations(runID string) ([]sink.Location, [][]store.Output, [][]store.SinkAction) {
	w.t.Helper()
	c := w.t.Context()
	outs, err := w.st.Outputs(c, jobName, runID)
	if err != nil {
		w.t.Fatal(err)
	}
	acts, err := w.st.Actions(c, jobName, runID)
	if err != nil {
		w.t.Fatal(err)
	}
	var keys []string
	first := map[string]store.Output{}
	byKey := map[string][]store.Output{}
	actsAt := map[string][]store.SinkAction{}
	add := func(key string, o store.Output) {
		if _, ok := first[key]; !ok {
			first[key] = o
			keys = append(keys, key)
		}
	}
	for _, o := range outs {
		key := sink.LocationKey(o)
		add(key, o)
		byKey[key] = append(byKey[key], o)
	}
	for _, a := range acts {
		add(a.Root, store.Output{RunID: runID, Sink: a.Sink, Kind: manifest.File, Root: a.Root})
		actsAt[a.Root] = append(actsAt[a.Root], a)
	}
	slices.Sort(keys)
	var locs []sink.Location
	var outsAt [][]store.Output
	var as [][]store.SinkAction
	for _, key := range keys {
		l, err := sink.OpenLocation(c, first[key])
		if err != nil {
			w.t.Fatalf("opening the location of run %s: %v", runID, err)
		}
		w.t.Cleanup(func() { l.Close() })
		locs, outsAt, as = append(locs, l), append(outsAt, byKey[key]), append(as, actsAt[key])
	}
	return locs, outsAt, as
}

// publish publishes committed runID as the runner does; with mark, it
// then marks it published and calls Published.
func (w *world) publish(runID string, mark bool) error {
	w.t.Helper()
	c := w.t.Context()
	r, err := w.st.Run(c, jobName, runID)
	if err != nil {
		w.t.Fatal(err)
	}
	locs, outs, acts := w.locations(runID)
	for i, l := range locs {
		if err := l.Publish(c, sink.Publication{Job: jobName, RunID: runID, Run: r, Outputs: outs[i], Actions: acts[i],
			State: w.st, Log: w.log}); err != nil {
			return err
		}
	}
	if !mark {
		return nil
	}
	if err := w.st.MarkPublished(c, jobName, w.lease.Token, runID); err != nil {
		w.t.Fatalf("marking run %s published: %v", runID, err)
	}
	for _, l := range locs {
		l.Published(c, runID, w.log)
	}
	return nil
}

// purge purges what runID published.
func (w *world) purge(runID string) error {
	w.t.Helper()
	locs, outs, _ := w.locations(runID)
	for i, l := range locs {
		if _, err := l.Purge(w.t.Context(), jobName, runID, outs[i], w.log); err != nil {
			return err
		}
	}
	return nil
}

// rows reads back the published rows, sorted.
func (w *world) rows() []string {
	w.t.Helper()
	got := w.p.Rows(w.t)
	slices.Sort(got)
	return got
}

// wantRows fails the test unless the published rows are want (any order).
func (w *world) wantRows(what string, want ...string) {
	w.t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if got := w.rows(); !slices.Equal(got, want) {
		w.t.Fatalf("%s: published rows %q, want %q", what, got, want)
	}
}

// wantStaged fails the test unless runID's staging is gone (want false)
// or there (want true).
func (w *world) wantStaged(what, runID string, want bool) {
	w.t.Helper()
	got := w.p.Staged(w.t, runID)
	if (len(got) > 0) != want {
		w.t.Fatalf("%s: staging of run %s holds %q, want something: %v", what, runID, got, want)
	}
}
