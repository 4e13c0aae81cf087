package sqlite

import (
	"iter"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// TestFilesQueryPlan checks that Files walks the files_current index in
// path order: no sort step, no table scan.
func TestFilesQueryPlan(t *testing.T) {
	s := openTemp(t)
	rows, err := s.db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+sqlstore.FilesQuery, "j", "src")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	got := strings.Join(plan, "; ")
	if !strings.Contains(got, "USING INDEX files_current") {
		t.Errorf("Files query plan %q does not use files_current", got)
	}
	if strings.Contains(got, "TEMP B-TREE") || strings.Contains(got, "SCAN files") {
		t.Errorf("Files query plan %q sorts or scans", got)
	}
}

// TestCommitRefusesPlannerBugs checks the commits a correct planner never
// makes are refused with nothing changed.
func TestCommitRefusesPlannerBugs(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "a"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, s, l, "r1", 0, "a", "b")

	rec := func(p string, size int64) store.FileRecord {
		return store.FileRecord{Ctx: "src", File: bookmark.File{Path: p, Size: size, MTime: 1}}
	}
	for i, tc := range []struct {
		name   string
		commit store.Commit
		want   string
	}{
		{"files without Advance", store.Commit{Added: []store.FileRecord{rec("c", 1)}}, "without Advance"},
		{"re-adding a current path", store.Commit{Advance: true, BaseVersion: 1, Added: []store.FileRecord{rec("a", 2)}}, "UNIQUE"},
		{"superseding an unknown path", store.Commit{Advance: true, BaseVersion: 1,
			Added: []store.FileRecord{rec("z", 2)}, Superseded: []store.FileRecord{rec("z", 1)}}, "no current record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "bad" + string(rune('0'+i))
			r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: id})
			if err != nil {
				t.Fatal(err)
			}
			c := tc.commit
			c.Job, c.Token, c.Run = "j", l.Token, r
			_, err = s.Commit(ctx, c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Commit: %v, want an error mentioning %q", err, tc.want)
			}
			if got := paths(t, s, "j"); !reflect.DeepEqual(got, []string{"a", "b"}) {
				t.Errorf("files after a refused commit = %v, want [a b]", got)
			}
			if h, _ := s.Head(ctx, "j"); h.Version != 1 {
				t.Errorf("head after a refused commit = %d, want 1", h.Version)
			}
		})
	}
}

// TestCorruptState checks that a damaged state row is reported with the
// job, ctx and version that hold it.
func TestCorruptState(t *testing.T) {
	s := openTemp(t)
	l, err := s.AcquireLease(t.Context(), "sales", store.Holder{ID: "a"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, s, l, "r1", 0, "a")
	if _, err := s.db.Exec(`UPDATE source_states SET state = x'7b226b696e64223a' WHERE job = 'sales'`); err != nil {
		t.Fatal(err)
	}
	_, err = s.SourceStates(t.Context(), "sales")
	if err == nil {
		t.Fatal("SourceStates of a corrupt row succeeded")
	}
	for _, want := range []string{`"sales"`, `"src"`, "version 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestStatsCounts(t *testing.T) {
	s := openTemp(t)
	l, err := s.AcquireLease(t.Context(), "j", store.Holder{ID: "a"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, s, l, "r1", 0, "a", "b", "c")
	if _, err := s.BeginRun(t.Context(), l.Token, store.Run{Job: "j", RunID: "r2"}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st["files"] != 3 || st["runs"] != 2 || st["outputs"] != 0 || st["db_bytes"] < 4096 {
		t.Errorf("Stats = %v, want files 3, runs 2, outputs 0, db_bytes >= 4096", st)
	}
}

// TestCommitWithoutBeginRun checks the library path: a run that was never
// begun is recorded by its commit.
func TestCommitWithoutBeginRun(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "a"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, s, l, "r1", 0, "a")
	h, err := s.Commit(ctx, store.Commit{Job: "j", Token: l.Token, BaseVersion: 1, Advance: true,
		Run:   store.Run{RunID: "lib-1", Mode: bookmark.ModeEnable},
		Added: []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: "b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, "j", "lib-1")
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 2 || r.Seq != 2 || r.Attempt != 1 || r.Status != store.StatusSucceeded || r.Version != 2 || r.StartedAt.IsZero() {
		t.Errorf("head %d, run %+v; want version 2 and a succeeded run with seq 2, attempt 1, version 2, a start time", h.Version, r)
	}
}

// TestFilesSnapshot commits while a Files stream is open: the commit does
// not wait for the reader (WAL), and the stream keeps its snapshot.
func TestFilesSnapshot(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "a"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, s, l, "r1", 0, "a", "c", "e")
	next, stop := iter.Pull2(s.Files(ctx, "j", "src"))
	defer stop()
	if f, err, ok := next(); !ok || err != nil || f.Path != "a" {
		t.Fatalf("first file = %q, %v, %v; want a", f.Path, err, ok)
	}
	commitFiles(t, s, l, "r2", 1, "b", "d")
	var rest []string
	for {
		f, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, f.Path)
	}
	if !reflect.DeepEqual(rest, []string{"c", "e"}) {
		t.Errorf("rest of the open stream = %v, want its snapshot [c e]", rest)
	}
	if got := paths(t, s, "j"); !reflect.DeepEqual(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("a new stream = %v, want [a b c d e]", got)
	}
}
