package storetest

import (
	"reflect"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// mustReset resets job to run to (or clears it) and checks which runs it
// reports undone.
func mustReset(t *testing.T, s store.Store, l store.Lease, to string, wantUndone ...string) {
	t.Helper()
	undone, err := s.Reset(t.Context(), l.Job, l.Token, to, "test")
	if err != nil {
		t.Fatalf("Reset(to %q): %v", to, err)
	}
	if got := runIDs(undone); !reflect.DeepEqual(got, wantUndone) && len(got)+len(wantUndone) > 0 {
		t.Errorf("Reset(to %q) undid %v, want %v", to, got, wantUndone)
	}
	for _, r := range undone {
		if !r.Undone || r.Status != store.StatusSucceeded {
			t.Errorf("Reset(to %q) returned run %s undone=%v status %q, want undone succeeded", to, r.RunID, r.Undone, r.Status)
		}
	}
}

// snapshot is a job's bookmark as a run left it.
type snapshot struct {
	states map[string]bookmark.SourceState
	files  map[string][]bookmark.File // per ctx
}

// take reads the job's current bookmark.
func take(t *testing.T, s store.Store, job string, ctxs ...string) snapshot {
	t.Helper()
	st, err := s.SourceStates(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshot{states: st, files: map[string][]bookmark.File{}}
	for _, c := range ctxs {
		snap.files[c] = files(t, s, job, c)
	}
	return snap
}

// wantSnapshot fails the test unless the job's bookmark equals want.
func wantSnapshot(t *testing.T, s store.Store, what string, want snapshot) {
	t.Helper()
	wantStates(t, s, job, want.states)
	for c, fs := range want.files {
		wantFiles(t, what+": Files("+c+")", files(t, s, job, c), fs)
	}
}

// testResetToRun rewinds over runs of every mode and checks the bookmark
// is exactly what the target committed.
func testResetToRun(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	advance(t, s, l, "r1", 0, map[string]bookmark.SourceState{src: state("fp", 2)},
		recs(src, file("a", 1), file("b", 1)), nil)
	at1 := take(t, s, job, src, src2)
	if len(at1.files[src]) != 2 {
		t.Fatalf("setup: %d files after r1, want 2", len(at1.files[src]))
	}

	mustCommit(t, s, commitOf(t, s, l, "r2", bookmark.ModePause, 1))
	advance(t, s, l, "r3", 1, map[string]bookmark.SourceState{src: state("fp", 3), src2: state("fp2", 1)},
		append(recs(src, file("a", 2), file("c", 1)), recs(src2, file("x", 1))...), recs(src, file("a", 1)))
	mustCommit(t, s, commitOf(t, s, l, "r4", bookmark.ModeDisable, 2))
	begin(t, s, l, "r5", bookmark.ModeEnable)
	if err := s.FailRun(ctx, job, l.Token, "r5", t0, store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	advance(t, s, l, "r6", 2, map[string]bookmark.SourceState{src: state("fp", 4), src2: state("fp2", 2)},
		append(recs(src, file("b", 2), file("d", 1)), recs(src2, file("y", 1))...), recs(src, file("b", 1)))
	wantHead(t, s, job, 3, "r6")

	mustReset(t, s, l, "r1", "r2", "r3", "r4", "r6")
	wantHead(t, s, job, 4, "r1")
	wantSnapshot(t, s, "after rewinding to r1", at1)
	for _, r := range []struct {
		id     string
		undone bool
	}{{"r1", false}, {"r2", true}, {"r3", true}, {"r4", true}, {"r5", false}, {"r6", true}} {
		if got := getRun(t, s, job, r.id); got.Undone != r.undone {
			t.Errorf("run %s Undone = %v, want %v", r.id, got.Undone, r.undone)
		}
	}

	// Again: a new version, nothing more to undo, same bookmark.
	mustReset(t, s, l, "r1")
	wantHead(t, s, job, 5, "r1")
	wantSnapshot(t, s, "after rewinding to r1 twice", at1)

	// A run planned before the rewinds cannot commit on its old base.
	c := commitOf(t, s, l, "r7", bookmark.ModeEnable, 3)
	c.Added = recs(src, file("e", 1))
	_, err := s.Commit(ctx, c)
	wantErr(t, "Commit planned before a rewind", err, store.ErrVersionConflict)
	wantSnapshot(t, s, "after a refused commit", at1)
}

func testResetErrors(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r")
	advance(t, s, l, "r1", 0, map[string]bookmark.SourceState{src: state("fp", 1)}, recs(src, file("a", 1)), nil)
	mustCommit(t, s, commitOf(t, s, l, "r2", bookmark.ModePause, 1))
	begin(t, s, l, "r3", bookmark.ModeEnable)
	if err := s.FailRun(ctx, job, l.Token, "r3", t0, store.Run{}, "boom"); err != nil {
		t.Fatal(err)
	}
	begin(t, s, l, "r4", bookmark.ModeEnable) // still running
	advance(t, s, l, "r5", 1, map[string]bookmark.SourceState{src: state("fp", 2)}, recs(src, file("b", 1)), nil)
	mustReset(t, s, l, "r1", "r2", "r5")
	at := take(t, s, job, src)

	for _, tc := range []struct{ to, why string }{
		{"r2", "an undone pause run"},
		{"r3", "a failed run"},
		{"r4", "a running run"},
		{"r5", "an undone run"},
	} {
		if _, err := s.Reset(ctx, job, l.Token, tc.to, "test"); err == nil {
			t.Errorf("Reset to %s (%s) succeeded, want an error", tc.to, tc.why)
		}
	}
	_, err := s.Reset(ctx, job, l.Token, "nope", "test")
	wantErr(t, "Reset to an unknown run", err, store.ErrNotFound)

	// A pause run that was not undone still holds no bookmark of its own.
	mustCommit(t, s, commitOf(t, s, l, "r6", bookmark.ModePause, 2))
	if _, err := s.Reset(ctx, job, l.Token, "r6", "test"); err == nil {
		t.Error("Reset to a pause run succeeded, want an error")
	}

	_, err = s.Reset(ctx, job, l.Token+1, "r1", "test")
	wantErr(t, "Reset with a stale token", err, store.ErrLeaseLost)
	if err := s.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	_, err = s.Reset(ctx, job, l.Token, "", "test")
	wantErr(t, "Reset without a lease", err, store.ErrLeaseLost)

	wantHead(t, s, job, 3, "r1")
	wantSnapshot(t, s, "after refused resets", at)
	if r := getRun(t, s, job, "r6"); r.Undone {
		t.Error("run r6 undone by a refused reset")
	}
}

func testResetToEmpty(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r")
	advance(t, s, l, "r1", 0, map[string]bookmark.SourceState{src: state("fp", 1)}, recs(src, file("a", 1)), nil)
	mustCommit(t, s, commitOf(t, s, l, "r2", bookmark.ModeDisable, 1))
	advance(t, s, l, "r3", 1, map[string]bookmark.SourceState{src: state("fp", 2)},
		recs(src, file("a", 2), file("b", 1)), recs(src, file("a", 1)))

	mustReset(t, s, l, "", "r1", "r2", "r3")
	// Versions keep growing so that a stale base never matches again.
	wantHead(t, s, job, 3, "")
	wantSnapshot(t, s, "after a full reset", snapshot{files: map[string][]bookmark.File{src: nil}})
	wantRecords(t, "RunInputs of undone runs", collect(t, s.RunInputs(t.Context(), job, []string{"r1", "r3"})), nil)

	advance(t, s, l, "r4", 3, map[string]bookmark.SourceState{src: state("fp", 9)}, recs(src, file("a", 2)), nil)
	wantHead(t, s, job, 4, "r4")
	wantFiles(t, "Files after a full reset and a commit", files(t, s, job, src), []bookmark.File{file("a", 2)})
	mustReset(t, s, l, "", "r4")
	wantHead(t, s, job, 5, "")
	wantFiles(t, "Files after a second full reset", files(t, s, job, src), nil)
}

// testRewindCommitRewind rewinds, commits on the rewound bookmark, and
// rewinds again, to a run of the new line and then past the first target.
func testRewindCommitRewind(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r")
	both := func(a, b bookmark.SourceState) map[string]bookmark.SourceState {
		return map[string]bookmark.SourceState{src: a, src2: b}
	}
	advance(t, s, l, "r1", 0, both(state("a", 1), state("b", 1)),
		append(recs(src, file("a", 1)), recs(src2, file("k", 1))...), nil)
	at1 := take(t, s, job, src, src2)
	advance(t, s, l, "r2", 1, both(state("a", 2), state("b", 2)),
		recs(src, file("a", 2), file("b", 1)), recs(src, file("a", 1)))
	at2 := take(t, s, job, src, src2)
	advance(t, s, l, "r3", 2, both(state("a", 3), state("b", 3)),
		append(recs(src, file("c", 1)), recs(src2, file("k", 3))...), recs(src2, file("k", 1)))

	mustReset(t, s, l, "r2", "r3") // version 4
	wantSnapshot(t, s, "rewound to r2", at2)

	advance(t, s, l, "r4", 4, both(state("a", 4), state("b", 4)),
		recs(src, file("b", 2), file("d", 1)), recs(src, file("b", 1)))
	at4 := take(t, s, job, src, src2)
	wantFiles(t, "Files after r4", at4.files[src], []bookmark.File{file("a", 2), file("b", 2), file("d", 1)})
	advance(t, s, l, "r5", 5, both(state("a", 5), state("b", 5)),
		append(recs(src, file("a", 5)), recs(src2, file("m", 1))...), recs(src, file("a", 2)))

	mustReset(t, s, l, "r4", "r5") // version 7
	wantHead(t, s, job, 7, "r4")
	wantSnapshot(t, s, "rewound to r4", at4)

	mustReset(t, s, l, "r1", "r2", "r4") // version 8
	wantHead(t, s, job, 8, "r1")
	wantSnapshot(t, s, "rewound to r1", at1)
	wantRecords(t, "RunInputs(r1) after rewinds", collect(t, s.RunInputs(t.Context(), job, []string{"r1"})),
		append(recs(src2, file("k", 1)), recs(src, file("a", 1))...))

	if _, err := s.Reset(t.Context(), job, l.Token, "r4", "test"); err == nil {
		t.Error("Reset to r4, undone by the last rewind, succeeded; want an error")
	}

	advance(t, s, l, "r6", 8, both(state("a", 6), state("b", 6)), recs(src, file("a", 6)), recs(src, file("a", 1)))
	wantFiles(t, "Files after committing on the twice-rewound bookmark", files(t, s, job, src), []bookmark.File{file("a", 6)})
	wantFiles(t, "Files(src2) after committing on the twice-rewound bookmark", files(t, s, job, src2), []bookmark.File{file("k", 1)})
}
