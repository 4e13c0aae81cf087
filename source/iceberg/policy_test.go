package iceberg_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	iceberg "github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	srciceberg "github.com/tidemark-etl/tidemark/source/iceberg"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
	_ "github.com/tidemark-etl/tidemark/store/sqlite"
)

// openState is a new SQLite state store, whose database holds the own
// catalog.
func openState(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openSource opens a source reading table with the block's extra lines.
func openSource(t *testing.T, name, extra string) source.Source {
	t.Helper()
	dir := t.TempDir()
	text := fmt.Sprintf("job: j\nsources:\n  - ctx: in\n    iceberg: {table: %s}\n%ssinks:\n  - ctx: out\n    path: %s\n    format: csv\n",
		name, extra, filepath.Join(dir, "out"))
	spec, err := job.Parse(filepath.Join(dir, "job.yaml"), []byte(text))
	if err != nil {
		t.Fatalf("parsing:\n%s\n%v", text, err)
	}
	s, err := source.Open(t.Context(), spec, spec.Sources[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bookmarkAt is the state of a source that read table up to snapshot id.
func bookmarkAt(tbl *table.Table, name string, id int64) bookmark.SourceState {
	return bookmark.SourceState{Kind: srciceberg.Kind, Fingerprint: "iceberg:" + name,
		Detail: srciceberg.StateDetail{Table: name, UUID: tbl.Metadata().TableUUID().String(), SnapshotID: id}}
}

func planAt(t *testing.T, s source.Source, st store.Store, prev bookmark.SourceState) (source.Plan, error) {
	t.Helper()
	return s.Plan(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Prev: prev, HasPrev: true,
		Now: time.Now()})
}

// newFiles are the data files a plan reads, by the rows' ids their names
// cannot show: the preview's snapshots' row counts and its files.
func newFiles(p source.Plan) []string {
	return slices.Clone(p.Preview().New)
}

// TestRewritePolicies: after the bookmark, an append, a snapshot that
// deletes a data file, and another append. on_rewrite: fail refuses the
// delete naming the table and snapshot and the reset; ignore reads both
// appends and skips the delete, saying so; reprocess reads the whole table
// at its current snapshot.
func TestRewritePolicies(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.p")
	tb.appendRows(t, "1:a")
	mark := tb.load(t).CurrentSnapshot().SnapshotID
	second := tb.appendRows(t, "2:b")
	tb.deleteFile(t, second)
	del := tb.load(t).CurrentSnapshot().SnapshotID
	third := tb.appendRows(t, "3:c")
	tbl := tb.load(t)
	prev := bookmarkAt(tbl, tb.name, mark)

	_, err := planAt(t, openSource(t, tb.name, ""), st, prev)
	var re *srciceberg.RewriteError
	if !errors.As(err, &re) || re.Snapshot != del || re.Table != "db.p" {
		t.Fatalf("on_rewrite fail (the default): %v, want a *RewriteError for snapshot %d of db.p", err, del)
	}
	for _, want := range []string{"db.p", fmt.Sprint(del), "bookmark reset j", "on_rewrite"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not mention %q", err, want)
		}
	}

	p, err := planAt(t, openSource(t, tb.name, "    on_rewrite: ignore\n"), st, prev)
	if err != nil {
		t.Fatalf("on_rewrite ignore: %v", err)
	}
	if got, want := newFiles(p), []string{second.FilePath(), third.FilePath()}; !slices.Equal(got, want) {
		t.Errorf("on_rewrite ignore reads %q, want both appends' files %q", got, want)
	}
	pv := p.Preview()
	if len(pv.Warnings) != 1 || !strings.Contains(pv.Warnings[0], fmt.Sprint(del)) {
		t.Errorf("on_rewrite ignore warns %q, want one warning naming snapshot %d", pv.Warnings, del)
	}
	d := pv.Detail.(srciceberg.PreviewDetail)
	if len(d.Snapshots) != 3 || d.Snapshots[1].Skip == "" || d.Snapshots[0].Skip != "" || d.Snapshots[2].Skip != "" {
		t.Errorf("on_rewrite ignore previews snapshots %+v, want the middle one skipped", d.Snapshots)
	}
	a, ok := p.Advance("r1", engineResult())
	if !ok || srciceberg.DetailOf(a.State).SnapshotID != tbl.CurrentSnapshot().SnapshotID || len(a.Added) != 2 {
		t.Errorf("on_rewrite ignore advances to %+v with %d files, want the current snapshot and 2 files", a.State, len(a.Added))
	}

	p, err = planAt(t, openSource(t, tb.name, "    on_rewrite: reprocess\n"), st, prev)
	if err != nil {
		t.Fatalf("on_rewrite reprocess: %v", err)
	}
	live := []string{tb.firstFile(t), third.FilePath()}
	if got := newFiles(p); !slices.Equal(got, live) {
		t.Errorf("on_rewrite reprocess reads %q, want the table's live files, oldest first, %q", got, live)
	}
}

// TestHistory: a bookmark whose snapshot expired is followed exactly while
// its child is there; once unread snapshots expired too, or the table is
// another one under the name, the plan is refused (*HistoryError), never
// read from scratch.
func TestHistory(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.h")
	tb.appendRows(t, "1:a")
	first := tb.load(t).CurrentSnapshot().SnapshotID
	second := tb.appendRows(t, "2:b")
	third := tb.appendRows(t, "3:c")
	prev := bookmarkAt(tb.load(t), tb.name, first)
	s := openSource(t, tb.name, "")

	tb.expire(t, 2) // the bookmark's snapshot goes, its child stays
	p, err := planAt(t, s, st, prev)
	if err != nil {
		t.Fatalf("the bookmark's snapshot expired, its child not: %v", err)
	}
	if got, want := newFiles(p), []string{second.FilePath(), third.FilePath()}; !slices.Equal(got, want) {
		t.Errorf("reads %q, want the two appends since the bookmark %q", got, want)
	}

	tb.expire(t, 1) // the second snapshot, not read yet, goes too
	_, err = planAt(t, s, st, prev)
	var he *srciceberg.HistoryError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "expire") || !strings.Contains(err.Error(), "bookmark reset j") {
		t.Fatalf("unread snapshots expired: %v, want a *HistoryError saying they expired and naming the reset", err)
	}

	other := bookmarkAt(tb.load(t), tb.name, tb.load(t).CurrentSnapshot().SnapshotID)
	other.Detail = srciceberg.StateDetail{Table: tb.name, UUID: "00000000-0000-0000-0000-000000000001",
		SnapshotID: srciceberg.DetailOf(other).SnapshotID}
	if _, err := planAt(t, s, st, other); !errors.As(err, &he) || !strings.Contains(err.Error(), "uuid") {
		t.Fatalf("another table under the name: %v, want a *HistoryError naming the uuid", err)
	}
}

// expire expires every snapshot but the newest keep.
func (tb *testTable) expire(t *testing.T, keep int) {
	t.Helper()
	tx := tb.load(t).NewTransaction()
	if err := tx.ExpireSnapshots(table.WithRetainLast(keep), table.WithOlderThan(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// firstFile is the table's data file of its first append.
func (tb *testTable) firstFile(t *testing.T) string {
	t.Helper()
	tbl := tb.load(t)
	fs, err := tbl.FS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var first *table.Snapshot
	for _, s := range tbl.Metadata().Snapshots() {
		if first == nil || s.SequenceNumber < first.SequenceNumber {
			first = &s
		}
	}
	mans, err := first.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	for e, err := range mans[0].Entries(fs, true) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Status() == iceberg.EntryStatusADDED {
			return e.DataFile().FilePath()
		}
	}
	t.Fatal("no file in the first snapshot")
	return ""
}

func engineResult() engine.SourceResult { return engine.SourceResult{Rows: 2} }

// TestRenamedColumn: a column renamed after a data file was written is
// refused when that file is planned (the engine reads columns by name and
// would read it as NULL), naming the file and both names; a file written
// after the rename reads.
func TestRenamedColumn(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.r")
	old := tb.appendRows(t, "1:a")
	mark := tb.load(t).CurrentSnapshot().SnapshotID
	tx := tb.load(t).NewTransaction()
	if err := tx.UpdateSchema(true, false).RenameColumn([]string{"v"}, "value").Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	s := openSource(t, tb.name, "")
	_, err := s.Plan(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Now: time.Now()})
	if err == nil || !strings.Contains(err.Error(), old.FilePath()) || !strings.Contains(err.Error(), "renamed value") {
		t.Fatalf("a first run over a file written before the rename: %v, want a refusal naming %s and the new name", err, old.FilePath())
	}
	tb.appendRows(t, "2:b")
	p, err := planAt(t, s, st, bookmarkAt(tb.load(t), tb.name, mark))
	if err != nil {
		t.Fatalf("reading a file written after the rename: %v", err)
	}
	if got := newFiles(p); len(got) != 1 || got[0] == old.FilePath() {
		t.Errorf("reads %q, want the one file written after the rename", got)
	}
}

// TestCompactionSkipped: a replace snapshot (a compaction rewriting a
// file into another with the same rows) after the bookmark adds no rows:
// it is skipped, under the default on_rewrite: fail too, and the appends
// around it are read.
func TestCompactionSkipped(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.c")
	tb.appendRows(t, "1:a")
	mark := tb.load(t).CurrentSnapshot().SnapshotID
	second := tb.appendRows(t, "2:b")
	tb.compact(t, second)
	replace := tb.load(t).CurrentSnapshot()
	if op := replace.Summary.Operation; op != table.OpReplace {
		t.Fatalf("the compaction's snapshot is %s, want replace", op)
	}
	third := tb.appendRows(t, "3:c")
	p, err := planAt(t, openSource(t, tb.name, ""), st, bookmarkAt(tb.load(t), tb.name, mark))
	if err != nil {
		t.Fatalf("a compaction after the bookmark: %v", err)
	}
	if got, want := newFiles(p), []string{second.FilePath(), third.FilePath()}; !slices.Equal(got, want) {
		t.Errorf("reads %q, want the appends' files %q and not the compacted copy", got, want)
	}
	d := p.Preview().Detail.(srciceberg.PreviewDetail)
	if len(d.Snapshots) != 3 || d.Snapshots[1].ID != replace.SnapshotID || !strings.Contains(d.Snapshots[1].Skip, "compaction") {
		t.Errorf("previews snapshots %+v, want the replace %d skipped as a compaction", d.Snapshots, replace.SnapshotID)
	}
}

// compact rewrites f into a copy of itself in a replace snapshot.
func (tb *testTable) compact(t *testing.T, f iceberg.DataFile) {
	t.Helper()
	tbl := tb.load(t)
	src, err := localFile(f.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := strings.TrimSuffix(src, ".parquet") + "-compacted.parquet"
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	df, err := table.FileToDataFile(t.Context(), fs, "file://"+filepath.ToSlash(dst), tbl.Schema(), tbl.Spec(), 0, tbl.Properties())
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	rw.DeleteFile(f)
	rw.AddDataFile(df)
	if err := rw.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func localFile(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	return filepath.FromSlash(u.Path), nil
}

// readPlan reads p's files with DuckDB and returns the rows, each as its
// columns joined by ":".
func readPlan(t *testing.T, p source.Plan) []string {
	t.Helper()
	eng := openDuckDB(t)
	defer eng.Close()
	tmp := t.TempDir()
	rd, err := p.Open(t.Context(), source.Env{Caps: eng.Capabilities(), Policy: engine.BadFail, Concurrency: 1,
		TempDir: func() (string, error) { return tmp, nil }})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	res, err := eng.Execute(t.Context(), engine.Plan{Sources: []engine.Source{rd.Input()},
		Sinks: []engine.Sink{{Ctx: "out", From: "in", Format: "csv", Location: out}}, OnBadRecord: engine.BadFail})
	if _, derr := rd.Done(t.Context(), err, res.Sources["in"], true); derr != nil || err != nil {
		t.Fatalf("reading the plan: %v, %v", err, derr)
	}
	var rows []string
	for _, f := range res.Sinks["out"].Files {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for _, l := range lines[1:] {
			rows = append(rows, strings.ReplaceAll(l, ",", ":"))
		}
	}
	slices.Sort(rows)
	return rows
}

// TestAddedColumnAndBounds: a column added to the table reads as NULL
// from the files written before it; bounded_snapshots reads that many
// append snapshots per run, oldest first, and defers the rest.
func TestAddedColumnAndBounds(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.a")
	tb.appendRows(t, "1:a")
	tx := tb.load(t).NewTransaction()
	if err := tx.UpdateSchema(true, false).AddColumn([]string{"w"}, iceberg.PrimitiveTypes.String, "", false, nil).Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	tb.appendRows(t, "2:b:x")
	s := openSource(t, tb.name, "    bounded_snapshots: 1\n")
	p, err := s.Plan(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readPlan(t, p), []string{"1:a:", "2:b:x"}; !slices.Equal(got, want) {
		t.Errorf("the first run reads %q, want %q (w NULL where the file lacks it)", got, want)
	}
	a, _ := p.Advance("r1", engine.SourceResult{})

	tb.appendRows(t, "3:c:y")
	tb.appendRows(t, "4:d:z")
	p, err = planAt(t, s, st, a.State)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readPlan(t, p), []string{"3:c:y"}; !slices.Equal(got, want) {
		t.Errorf("bounded_snapshots 1 reads %q, want the older append's %q", got, want)
	}
	if pv := p.Preview(); pv.Deferred != 1 {
		t.Errorf("bounded_snapshots 1 defers %d files, want 1", pv.Deferred)
	}
	a, _ = p.Advance("r2", engine.SourceResult{})
	p, err = planAt(t, s, st, a.State)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := readPlan(t, p), []string{"4:d:z"}; !slices.Equal(got, want) {
		t.Errorf("the next bounded run reads %q, want %q", got, want)
	}
}

// commitRun commits an enable run of job j that read p, as the runner
// does, in a state store whose lease it takes once.
func commitRun(t *testing.T, st store.Store, p source.Plan, n int) {
	t.Helper()
	c := t.Context()
	l, err := st.AcquireLease(c, "j", store.Holder{ID: "t", Host: "t", PID: 1, Started: time.Now()}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer st.ReleaseLease(c, l)
	id := fmt.Sprintf("20260102T030405Z-%06x", n)
	r, err := st.BeginRun(c, l.Token, store.Run{Job: "j", RunID: id, Mode: bookmark.ModeEnable, StartedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.Head(c, "j")
	if err != nil {
		t.Fatal(err)
	}
	states, err := st.SourceStates(c, "j")
	if err != nil {
		t.Fatal(err)
	}
	if states == nil {
		states = map[string]bookmark.SourceState{}
	}
	r.Status, r.FinishedAt = store.StatusSucceeded, time.Now()
	r.Sources = map[string]store.Count{"in": p.Count(&engine.SourceResult{})}
	cm := store.Commit{Job: "j", Token: l.Token, BaseVersion: head.Version, Advance: true, Run: r, Sources: states}
	if a, ok := p.Advance(id, engine.SourceResult{}); ok {
		states["in"] = a.State
		cm.Added, cm.Superseded = a.Added, a.Superseded
	}
	if _, err := st.Commit(c, cm); err != nil {
		t.Fatal(err)
	}
}

// planStored plans against the state committed in st.
func planStored(t *testing.T, s source.Source, st store.Store) source.Plan {
	t.Helper()
	states, err := st.SourceStates(t.Context(), "j")
	if err != nil {
		t.Fatal(err)
	}
	prev, has := states["in"]
	p, err := s.Plan(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st, Prev: prev, HasPrev: has,
		Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBatchThenCrash: a run read in batches that stops after a batch cut
// inside a snapshot (the first run's whole table, then an append of two
// files' worth) leaves a bookmark naming the snapshot begun; the next
// run reads the rest of it, and then only what is new: every row once.
func TestBatchThenCrash(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.b")
	for _, r := range []string{"1:a", "2:b", "3:c"} {
		tb.appendRows(t, r)
	}
	s := openSource(t, tb.name, "")
	var got []string
	p := planStored(t, s, st)
	head, _ := p.(source.Splitter).Split(1)
	got = append(got, readPlan(t, head)...)
	commitRun(t, st, head, 1) // the run dies here, before its second batch
	if d := srciceberg.DetailOf(mustState(t, st)); d.Partial == 0 || !d.PartialWhole || d.SnapshotID != 0 {
		t.Fatalf("after a batch inside the first run's table: bookmark %+v, want the table's snapshot begun", d)
	}
	p = planStored(t, s, st)
	if p.Pending() != 2 {
		t.Fatalf("the run after the crash plans %d files, want the 2 not read", p.Pending())
	}
	got = append(got, readPlan(t, p)...)
	commitRun(t, st, p, 2)
	if d := srciceberg.DetailOf(mustState(t, st)); d.Partial != 0 || d.SnapshotID != tb.load(t).CurrentSnapshot().SnapshotID {
		t.Fatalf("after the rest: bookmark %+v, want the current snapshot and nothing begun", d)
	}
	tb.appendRows(t, "4:d")
	got = append(got, readPlan(t, planStored(t, s, st))...)
	slices.Sort(got)
	if want := []string{"1:a", "2:b", "3:c", "4:d"}; !slices.Equal(got, want) {
		t.Errorf("the runs read %q, want %q once each", got, want)
	}
}

func mustState(t *testing.T, st store.Store) bookmark.SourceState {
	t.Helper()
	states, err := st.SourceStates(t.Context(), "j")
	if err != nil {
		t.Fatal(err)
	}
	return states["in"]
}

// TestStateWithoutCatalog: a state store that holds no SQL catalog (memory,
// as S3) is refused when planning, naming the limitation.
func TestStateWithoutCatalog(t *testing.T) {
	st := memory.New(memory.Options{})
	_, err := openSource(t, "db.t", "").Plan(t.Context(), source.Request{Job: "j", Mode: bookmark.ModeEnable, State: st,
		Now: time.Now()})
	if !errors.Is(err, icecatalog.ErrNoOwnCatalog) || !strings.Contains(err.Error(), "db.t") {
		t.Fatalf("planning with the state in memory: %v, want ErrNoOwnCatalog naming the table", err)
	}
}

// TestMissingDataFile: a data file the table names that is gone when the
// engine reads it fails the run naming the file and its snapshot, and is
// never retried (Iceberg data files do not change).
func TestMissingDataFile(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.m")
	f := tb.appendRows(t, "1:a")
	p := planStored(t, openSource(t, tb.name, ""), st)
	eng := openDuckDB(t)
	defer eng.Close()
	tmp := t.TempDir()
	rd, err := p.Open(t.Context(), source.Env{Caps: eng.Capabilities(), Policy: engine.BadFail, Concurrency: 1,
		TempDir: func() (string, error) { return tmp, nil }})
	if err != nil {
		t.Fatal(err)
	}
	path, err := localFile(f.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	res, engErr := eng.Execute(t.Context(), engine.Plan{Sources: []engine.Source{rd.Input()},
		Sinks:       []engine.Sink{{Ctx: "out", From: "in", Format: "csv", Location: filepath.Join(t.TempDir(), "out")}},
		OnBadRecord: engine.BadFail})
	if engErr == nil {
		t.Fatal("the engine read a data file that is gone")
	}
	retry, err := rd.Done(t.Context(), engErr, res.Sources["in"], false)
	if retry || err == nil || !strings.Contains(err.Error(), f.FilePath()) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Done: retry %v, %v; want no retry and an error naming %s as missing", retry, err, f.FilePath())
	}
}

// TestReprocessCommits: on_rewrite: reprocess re-reads files earlier runs
// recorded; their records are superseded, so the run commits, and the
// next run reads only what is new.
func TestReprocessCommits(t *testing.T) {
	st := openState(t)
	tb := newTable(t, st, "db.rp")
	tb.appendRows(t, "1:a")
	second := tb.appendRows(t, "2:b")
	s := openSource(t, tb.name, "    on_rewrite: reprocess\n")
	p := planStored(t, s, st)
	commitRun(t, st, p, 1)
	tb.deleteFile(t, second)
	tb.appendRows(t, "3:c")
	p = planStored(t, s, st)
	if got, want := readPlan(t, p), []string{"1:a", "3:c"}; !slices.Equal(got, want) {
		t.Fatalf("the reprocess reads %q, want the table now %q", got, want)
	}
	commitRun(t, st, p, 2)
	tb.appendRows(t, "4:d")
	if got, want := readPlan(t, planStored(t, s, st)), []string{"4:d"}; !slices.Equal(got, want) {
		t.Errorf("the run after the reprocess reads %q, want %q", got, want)
	}
	if st := mustState(t, st); st.Files != 3 {
		t.Errorf("the bookmark counts %d files recorded, want 3 (the re-read file once)", st.Files)
	}
}
