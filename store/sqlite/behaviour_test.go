package sqlite

import (
	"encoding/json"
	"iter"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

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
		{"re-adding a current path", store.Commit{Advance: true, BaseVersion: 1, Added: []store.FileRecord{rec("a", 2)}}, "a current record exists"},
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
	// The source's state in the job's version object: a number where a
	// string belongs.
	var key string
	var body []byte
	if err := s.db.QueryRow(`SELECT key, body FROM state_objects WHERE key LIKE 'jobs/sales/versions/%'`).Scan(&key, &body); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	v["states"].(map[string]any)["src"] = map[string]any{"kind": 7}
	body, _ = json.Marshal(v)
	if _, err := s.db.Exec(`UPDATE state_objects SET body = ? WHERE key = ?`, body, key); err != nil {
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
	if st["jobs"] != 1 || st["segments"] != 1 || st["objects"] < 4 || st["db_bytes"] < 4096 {
		t.Errorf("Stats = %v, want jobs 1, segments 1, objects >= 4, db_bytes >= 4096", st)
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
