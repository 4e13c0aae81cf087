package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/statecopy"
	"github.com/tidemark-etl/tidemark/store"
)

// RunImport runs the cases of store.Importer (`tidemark state copy`): a
// rich history copied from the backend to a new one of its own, from a
// peer backend's store to it and from it to the peer's, read back the same
// through every read of the contract, usable afterwards (a free lease, a
// commit on top, a rewind into the copied history), and refused where the
// job already has state. open is as for Run; the backend must implement
// store.Importer. peer opens a new, empty store of another backend that
// implements it too (store/memory's New, say).
func RunImport(t *testing.T, open, peer func(t *testing.T) store.Store) {
	for _, pair := range []struct {
		name     string
		from, to func(t *testing.T) store.Store
	}{
		{"ToItself", open, open},
		{"FromPeer", peer, open},
		{"ToPeer", open, peer},
	} {
		t.Run(pair.name, func(t *testing.T) { testImport(t, pair.from(t), pair.to(t)) })
	}
	t.Run("Refused", func(t *testing.T) { testImportRefused(t, open(t)) })
}

// buildHistory gives job a history with every kind of record: commits
// that add and supersede files and record key ranges, a failed run, a
// pause run, outputs published and not, actions, a rewind that undoes runs
// (one of them purged), a commit after it and a run left running.
func buildHistory(t *testing.T, s store.Store) {
	t.Helper()
	ctx := t.Context()
	l := acquire(t, s, job, "builder")
	c := commitOf(t, s, l, "r1", bookmark.ModeEnable, 0)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", 2)}
	c.Added = recs(src, file("a.csv", 10), file("b.csv", 20))
	c.Outputs = []store.Output{output("r1", "sink_a", "part-r1-0.parquet")}
	c.Actions = []store.SinkAction{{Sink: "sink_a", Root: "s3://out/sink_a/", Mode: "overwrite_partitions", Partitions: []string{"product=a"}}}
	mustCommit(t, s, c)
	if err := s.MarkPublished(ctx, job, l.Token, "r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: "r2", Mode: bookmark.ModeEnable, StartedAt: t0, Host: "worker-2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.FailRun(ctx, job, l.Token, "r2", t0.Add(time.Hour), store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	c = commitOf(t, s, l, "r3", bookmark.ModeEnable, 1)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", 3), src2: {Kind: "table", Fingerprint: "t"}}
	c.Superseded = recs(src, file("a.csv", 10))
	c.Added = recs(src, file("a.csv", 11), file("c.csv", 30))
	c.Ranges = []store.RangeRecord{{Ctx: src2, RunID: "r3", Range: []byte(`{"after":7}`), Rows: 7}}
	c.Outputs = []store.Output{output("r3", "sink_a", "part-r3-0.parquet"), output("r3", "sink_b", "part-r3-0.csv")}
	mustCommit(t, s, c)
	if err := s.MarkPublished(ctx, job, l.Token, "r3"); err != nil {
		t.Fatal(err)
	}
	c = commitOf(t, s, l, "r4", bookmark.ModePause, 2)
	c.Outputs = []store.Output{output("r4", "sink_a", "part-r4-0.parquet")}
	mustCommit(t, s, c)
	if err := s.MarkPublished(ctx, job, l.Token, "r4"); err != nil {
		t.Fatal(err)
	}
	c = commitOf(t, s, l, "r5", bookmark.ModeEnable, 2)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", 4)}
	c.Superseded = recs(src, file("b.csv", 20))
	c.Added = recs(src, file("b.csv", 21), file("d.csv", 40))
	c.Outputs = []store.Output{output("r5", "sink_a", "part-r5-0.parquet")}
	mustCommit(t, s, c)
	if err := s.MarkPublished(ctx, job, l.Token, "r5"); err != nil {
		t.Fatal(err)
	}
	mustReset(t, s, l, "r3", "r4", "r5")
	if err := s.MarkPurged(ctx, job, l.Token, "r5"); err != nil {
		t.Fatal(err)
	}
	c = commitOf(t, s, l, "r6", bookmark.ModeEnable, 4)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", 5)}
	c.Superseded = recs(src, file("c.csv", 30))
	c.Added = recs(src, file("c.csv", 31), file("e.csv", 50))
	c.Outputs = []store.Output{output("r6", "sink_a", "part-r6-0.parquet")}
	mustCommit(t, s, c)
	begin(t, s, l, "r7", bookmark.ModeEnable)
	if err := s.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	// Another job of the store is not copied with this one.
	lo := acquire(t, s, otherJob, "o1")
	advance(t, s, lo, "o1", 0, map[string]bookmark.SourceState{src: state("other", 1)}, recs(src, file("z.csv", 1)), nil)
}

// testImport copies the built history from one store to another, reads it
// back and uses the copy.
func testImport(t *testing.T, from, to store.Store) {
	ctx := t.Context()
	buildHistory(t, from)
	sum, err := statecopy.Copy(ctx, from, to, job)
	if err != nil {
		t.Fatalf("copying: %v", err)
	}
	if sum.Runs != 7 || sum.Versions != 5 || sum.Head != 5 {
		t.Errorf("copy summary %+v, want 7 runs and 5 versions up to 5", sum)
	}
	if runs, _ := to.Runs(ctx, otherJob, store.RunQuery{}); len(runs) != 0 {
		t.Errorf("the copy of %s holds %d runs of %s, want none", job, len(runs), otherJob)
	}
	unpub, err := to.Unpublished(ctx, job)
	if err != nil || len(unpub) != 1 || unpub[0].RunID != "r6" {
		t.Errorf("Unpublished of the copy: got %v (%v), want r6", runIDs(unpub), err)
	}
	published := collect(t, to.PublishedOutputs(ctx, job, "s3://out/sink_a/"))
	if len(published) != 3 { // r1, r3 and r4; r5 was purged, r6 is not published
		t.Errorf("PublishedOutputs of the copy: got %d, want 3: %+v", len(published), published)
	}
	if r := getRun(t, to, job, "r5"); !r.Undone || !r.Purged {
		t.Errorf("run r5 in the copy: undone %v purged %v, want both", r.Undone, r.Purged)
	}
	if r := getRun(t, to, job, "r2"); r.Host != "worker-2" || r.Error != "boom" {
		t.Errorf("run r2 in the copy: host %q error %q, want worker-2 and boom", r.Host, r.Error)
	}

	// The copy is free to run: its lease is free, a commit goes on top of
	// the copied head, and a rewind into the copied history restores
	// what was current then (superseded records included).
	l, err := to.AcquireLease(ctx, job, holder("next"), time.Hour)
	if err != nil {
		t.Fatalf("taking the lease of the copied job: %v", err)
	}
	if err := to.FailRun(ctx, job, l.Token, "r7", t0.Add(2*time.Hour), store.Run{}, "died"); err != nil {
		t.Fatal(err)
	}
	c := commitOf(t, to, l, "r8", bookmark.ModeEnable, 5)
	c.Sources = map[string]bookmark.SourceState{src: state("fp", 6)}
	c.Superseded = recs(src, file("e.csv", 50))
	c.Added = recs(src, file("e.csv", 51))
	mustCommit(t, to, c)
	wantHead(t, to, job, 6, "r8")
	mustReset(t, to, l, "r1", "r3", "r6", "r8")
	wantFiles(t, "Files after rewinding the copy to r1", files(t, to, job, src), []bookmark.File{file("a.csv", 10), file("b.csv", 20)})
	if rs := collect(t, to.RunRanges(ctx, job, []string{"r3"})); len(rs) != 0 {
		t.Errorf("RunRanges(r3) after rewinding the copy before it: %+v, want none", rs)
	}
}

// testImportRefused: a job with state in the destination is not imported
// over, and a malformed history is refused, both writing nothing.
func testImportRefused(t *testing.T, s store.Store) {
	ctx := t.Context()
	imp, ok := s.(store.Importer)
	if !ok {
		t.Fatalf("%T does not implement store.Importer", s)
	}
	buildHistory(t, s)
	h, err := statecopy.Export(ctx, s, job)
	if err != nil {
		t.Fatal(err)
	}
	if err := imp.ImportJob(ctx, h); !errors.Is(err, store.ErrJobExists) {
		t.Errorf("importing over the job's own state: got %v, want ErrJobExists", err)
	}
	if _, err := statecopy.Copy(ctx, s, s, job); !errors.Is(err, store.ErrJobExists) {
		t.Errorf("copying a job onto itself: got %v, want ErrJobExists", err)
	}
	bad := h
	bad.Job = "fresh"
	if err := imp.ImportJob(ctx, bad); err == nil {
		t.Errorf("importing runs that name another job: got nil, want an error")
	}
	for i := range bad.Runs {
		bad.Runs[i].Run.Job = "fresh"
	}
	bad.Versions = bad.Versions[1:]
	if err := imp.ImportJob(ctx, bad); err == nil {
		t.Errorf("importing versions that do not start at 1: got nil, want an error")
	}
	if head, _ := s.Head(ctx, "fresh"); head.Version != 0 {
		t.Errorf("a refused import wrote version %d", head.Version)
	}
	if runs, _ := s.Runs(ctx, "fresh", store.RunQuery{}); len(runs) != 0 {
		t.Errorf("a refused import wrote %d runs", len(runs))
	}
}
