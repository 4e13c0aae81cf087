package statecopy_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/statecopy"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/sqlobj"
)

// longHistory is the number of runs and versions of the long job.
const longHistory = 3000

// countingBackend counts a backend's requests: reads of objects (Get,
// Open, Stat), List calls and the entries they yielded.
type countingBackend struct {
	objcore.Backend
	reads, lists, listed atomic.Int64
}

func (c *countingBackend) Get(ctx context.Context, key string) (objcore.Object, error) {
	c.reads.Add(1)
	return c.Backend.Get(ctx, key)
}

func (c *countingBackend) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.reads.Add(1)
	return c.Backend.Open(ctx, key)
}

func (c *countingBackend) Stat(ctx context.Context, key string) (string, error) {
	c.reads.Add(1)
	return c.Backend.Stat(ctx, key)
}

func (c *countingBackend) List(ctx context.Context, prefix, startAfter string, yield func(objcore.Entry) (bool, error)) error {
	c.lists.Add(1)
	return c.Backend.List(ctx, prefix, startAfter, func(e objcore.Entry) (bool, error) {
		c.listed.Add(1)
		return yield(e)
	})
}

// requests is what a counting backend counted since the last call.
func (c *countingBackend) requests() (reads, lists, listed int64) {
	return c.reads.Swap(0), c.lists.Swap(0), c.listed.Swap(0)
}

// longJob is a history of n runs, each committing one version that adds
// one file and publishes one output; every 100th run failed first.
func longJob(n int) store.JobHistory {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := store.JobHistory{Job: "long"}
	seq := int64(0)
	for v := int64(1); v <= int64(n); v++ {
		at := t0.Add(time.Duration(v) * time.Minute)
		if v%100 == 0 {
			seq++
			h.Runs = append(h.Runs, store.RunHistory{Run: store.Run{Job: "long", RunID: fmt.Sprintf("f%05d", v), Seq: seq,
				Attempt: 1, Mode: bookmark.ModeEnable, Status: store.StatusFailed, StartedAt: at, FinishedAt: at, Error: "boom",
				Version: v - 1}})
		}
		seq++
		id := fmt.Sprintf("r%05d", v)
		h.Runs = append(h.Runs, store.RunHistory{
			Run: store.Run{Job: "long", RunID: id, Seq: seq, Attempt: 1, Mode: bookmark.ModeEnable, Status: store.StatusSucceeded,
				StartedAt: at, FinishedAt: at.Add(time.Second), Version: v},
			Outputs: []store.Output{{RunID: id, Sink: "out", Kind: manifest.File, Root: "/data/out/",
				Final: "part-" + id + ".parquet", Rows: 1, Bytes: 10, Published: true}},
		})
		h.Versions = append(h.Versions, store.VersionStates{
			Version: store.Version{Version: v, Kind: store.KindCommit, RunID: id, At: at.Add(time.Second)},
			States:  map[string]bookmark.SourceState{"src": {Kind: bookmark.KindFiles, Fingerprint: "fp"}},
		})
		h.Files = append(h.Files, store.FileHistory{RunID: id, Added: v,
			FileRecord: store.FileRecord{Ctx: "src", File: bookmark.File{Path: fmt.Sprintf("in/f-%05d.csv", v), Size: v, MTime: v}}})
	}
	return h
}

// backends are the object backends the test copies into: memory, and
// SQLite (objcore over sqlobj).
func backends(t *testing.T) map[string]func() objcore.Backend {
	return map[string]func() objcore.Backend{
		"memory": func() objcore.Backend { return objcore.NewMemBackend("memory://"+t.Name(), nil) },
		"sqlite": func() objcore.Backend {
			path := filepath.Join(t.TempDir(), "state.db")
			db, err := sql.Open("sqlite", "file:"+path+"?_busy_timeout=30000&_journal_mode=WAL&_txlock=immediate")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if err := sqlobj.Create(t.Context(), db, sqlobj.SQLite); err != nil {
				t.Fatal(err)
			}
			return sqlobj.New(db, sqlobj.SQLite, path+"#")
		},
	}
}

// TestCopyLongHistory: copying a job of 3,000 runs and versions, with the
// read-back, costs a bounded number of requests per version and run, on
// memory and on SQLite; and the reads of one version, one page of
// versions or runs, one run, and a rewind to an old run, in a process
// that has read nothing yet, cost a bounded number of requests however
// long the history.
func TestCopyLongHistory(t *testing.T) {
	ctx := t.Context()
	hist := longJob(longHistory)
	n := int64(len(hist.Runs) + len(hist.Versions))
	for name, newBackend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			from, err := objcore.Open(ctx, objcore.NewMemBackend("memory://from", nil), objcore.Options{Kind: "memory"})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := from.ImportJob(ctx, hist); err != nil {
				t.Fatal(err)
			}
			t.Logf("building the source: %s", time.Since(start))

			c := &countingBackend{Backend: newBackend()}
			to, err := objcore.Open(ctx, c, objcore.Options{Kind: name})
			if err != nil {
				t.Fatal(err)
			}
			start = time.Now()
			sum, err := statecopy.Copy(ctx, from, to, hist.Job)
			if err != nil {
				t.Fatal(err)
			}
			reads, lists, listed := c.requests()
			t.Logf("copy of %d runs and %d versions: %s, %d reads, %d lists of %d entries",
				sum.Runs, sum.Versions, time.Since(start), reads, lists, listed)
			if sum.Versions != longHistory || sum.Head != longHistory {
				t.Errorf("copied %d versions, head %d, want %d", sum.Versions, sum.Head, longHistory)
			}
			// The read-back reads each version, run and segment a few
			// times: a walk from the head per version is n² reads.
			if max := 12 * n; reads > max || listed > max {
				t.Errorf("copy made %d reads and listed %d entries, want at most %d each (12 per version and run)", reads, listed, max)
			}

			// The read-back alone: Export of the copy, cold.
			back, err := objcore.Open(ctx, c, objcore.Options{Kind: name, MustExist: true})
			if err != nil {
				t.Fatal(err)
			}
			c.requests()
			start = time.Now()
			if _, err := statecopy.Export(ctx, back, hist.Job); err != nil {
				t.Fatal(err)
			}
			reads, lists, listed = c.requests()
			t.Logf("export of the copy: %s, %d reads, %d lists of %d entries", time.Since(start), reads, lists, listed)
			if max := 8 * n; reads > max || listed > max {
				t.Errorf("export made %d reads and listed %d entries, want at most %d each (8 per version and run)", reads, listed, max)
			}

			// A process that has read nothing: every read below starts cold.
			fresh := func() *objcore.Store {
				t.Helper()
				s, err := objcore.Open(ctx, c, objcore.Options{Kind: name, MustExist: true})
				if err != nil {
					t.Fatal(err)
				}
				c.requests()
				return s
			}
			bound := func(what string, maxReads, maxListed int64) {
				t.Helper()
				reads, lists, listed := c.requests()
				t.Logf("%s: %d reads, %d lists of %d entries", what, reads, lists, listed)
				if reads > maxReads || listed > maxListed {
					t.Errorf("%s: %d reads, %d entries listed, want at most %d and %d", what, reads, listed, maxReads, maxListed)
				}
			}
			for _, v := range []int64{1, longHistory / 2, longHistory - 1, longHistory} {
				s := fresh()
				states, err := s.SourceStatesAt(ctx, hist.Job, v)
				if err != nil {
					t.Fatal(err)
				}
				if got := states["src"].Fingerprint; got != "fp" {
					t.Errorf("SourceStatesAt(%d): fingerprint %q, want fp", v, got)
				}
				bound(fmt.Sprintf("SourceStatesAt(%d)", v), 4, 4)
			}
			if _, err := fresh().SourceStatesAt(ctx, hist.Job, longHistory+1); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("SourceStatesAt(%d) = %v, want store.ErrNotFound", longHistory+1, err)
			}

			s := fresh()
			vs, err := s.Versions(ctx, hist.Job, store.VersionQuery{Before: 11, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != 5 || vs[0].Version != 10 || vs[4].Version != 6 {
				t.Errorf("Versions(before 11, limit 5) = %+v, want versions 10 down to 6", vs)
			}
			bound("Versions(before 11, limit 5)", 5+4, 4)

			s = fresh()
			runs, err := s.Runs(ctx, hist.Job, store.RunQuery{BeforeSeq: 101, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 10 || runs[0].Seq != 100 || runs[9].Seq != 91 {
				t.Errorf("Runs(before 101, limit 10): %d runs from seq %d, want seqs 100 down to 91", len(runs), runs[0].Seq)
			}
			bound("Runs(before seq 101, limit 10)", 10+2, 10+1)

			s = fresh()
			if r, err := s.Run(ctx, hist.Job, "r00010"); err != nil || r.Version != 10 {
				t.Errorf("Run(r00010) = version %d, %v; want version 10", r.Version, err)
			}
			bound("Run(r00010)", 2, 0)

			// A rewind to an old run reads the records of the runs it
			// undoes (they are marked), not the versions between.
			s = fresh()
			l, err := s.AcquireLease(ctx, hist.Job, store.Holder{ID: "test"}, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			c.requests()
			undone, err := s.Reset(ctx, hist.Job, l.Token, "r00010", "test")
			if err != nil {
				t.Fatal(err)
			}
			if len(undone) != longHistory-10 {
				t.Errorf("the rewind undid %d runs, want %d", len(undone), longHistory-10)
			}
			later := int64(len(hist.Runs)) - 10 // the runs after r00010
			bound("Reset(to r00010)", 2*later+50, later+50)
			states, err := fresh().SourceStatesAt(ctx, hist.Job, longHistory+1)
			if err != nil || states["src"].Fingerprint != "fp" {
				t.Errorf("SourceStatesAt(%d) after the rewind = %v, %v", longHistory+1, states, err)
			}
			bound(fmt.Sprintf("SourceStatesAt(%d)", longHistory+1), 4, 4)
		})
	}
}

// inFlight gauges how many reads of a version's states or a run's outputs
// a store has in flight at once: each waits, up to 20ms, for a fourth.
type inFlight struct {
	store.Store
	in, most atomic.Int64
}

func (g *inFlight) gauge() {
	n := g.in.Add(1)
	defer g.in.Add(-1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
	for end := time.Now().Add(20 * time.Millisecond); g.in.Load() < 4 && time.Now().Before(end); {
		time.Sleep(100 * time.Microsecond)
	}
}

func (g *inFlight) SourceStatesAt(ctx context.Context, job string, v int64) (map[string]bookmark.SourceState, error) {
	g.gauge()
	return g.Store.SourceStatesAt(ctx, job, v)
}

func (g *inFlight) Outputs(ctx context.Context, job, runID string) ([]store.Output, error) {
	g.gauge()
	return g.Store.Outputs(ctx, job, runID)
}

// TestExportReadsInParallel: Export reads versions and runs several at a
// time (over S3 one after another, 3,000 runs and versions took minutes),
// and what it reads is in order all the same.
func TestExportReadsInParallel(t *testing.T) {
	ctx := t.Context()
	hist := longJob(60)
	s, err := objcore.Open(ctx, objcore.NewMemBackend("memory://"+t.Name(), nil), objcore.Options{Kind: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ImportJob(ctx, hist); err != nil {
		t.Fatal(err)
	}
	g := &inFlight{Store: s}
	got, err := statecopy.Export(ctx, g, hist.Job)
	if err != nil {
		t.Fatal(err)
	}
	if most := g.most.Load(); most < 4 {
		t.Errorf("at most %d reads were in flight at once, want 4 or more", most)
	}
	if len(got.Versions) != 60 || len(got.Runs) != 60 || len(got.Files) != 60 {
		t.Fatalf("exported %d versions, %d runs, %d files; want 60 each", len(got.Versions), len(got.Runs), len(got.Files))
	}
	for i := range 60 {
		if v := got.Versions[i].Version.Version; v != int64(i+1) {
			t.Errorf("version %d at position %d", v, i+1)
		}
		if r := got.Runs[i]; r.Run.Seq != int64(i+1) || len(r.Outputs) != 1 || r.Outputs[0].RunID != r.Run.RunID {
			t.Errorf("run %s (seq %d) at position %d with outputs %+v", r.Run.RunID, r.Run.Seq, i+1, r.Outputs)
		}
	}
}
