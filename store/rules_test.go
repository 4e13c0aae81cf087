package store

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

func TestNextAttempt(t *testing.T) {
	for _, tc := range []struct {
		newestFirst []string
		want        int
	}{
		{nil, 1},
		{[]string{StatusSucceeded, StatusFailed}, 1},
		{[]string{StatusFailed}, 2},
		{[]string{StatusFailed, StatusRunning, StatusFailed, StatusSucceeded, StatusFailed}, 3},
		{[]string{StatusRunning, StatusSucceeded}, 1},
	} {
		if got := NextAttempt(slices.Values(tc.newestFirst)); got != tc.want {
			t.Errorf("NextAttempt(%v) = %d, want %d", tc.newestFirst, got, tc.want)
		}
	}
}

func TestUndoes(t *testing.T) {
	target := Run{Seq: 3, Status: StatusSucceeded}
	for _, tc := range []struct {
		name   string
		target Run
		r      Run
		want   bool
	}{
		{"later succeeded", target, Run{Seq: 4, Status: StatusSucceeded}, true},
		{"later pause run", target, Run{Seq: 4, Status: StatusSucceeded, Mode: bookmark.ModePause}, true},
		{"the target itself", target, Run{Seq: 3, Status: StatusSucceeded}, false},
		{"earlier", target, Run{Seq: 2, Status: StatusSucceeded}, false},
		{"later failed", target, Run{Seq: 5, Status: StatusFailed}, false},
		{"later running", target, Run{Seq: 5, Status: StatusRunning}, false},
		{"already undone", target, Run{Seq: 5, Status: StatusSucceeded, Undone: true}, false},
		{"full reset", Run{}, Run{Seq: 1, Status: StatusSucceeded}, true},
	} {
		if got := Undoes(tc.target, tc.r); got != tc.want {
			t.Errorf("%s: Undoes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRollsForwardAndPublishedAt(t *testing.T) {
	done := Output{Root: "/out", Final: "a", Published: true}
	left := Output{Root: "/out", Final: "b"}
	ok := Run{Status: StatusSucceeded}
	for _, tc := range []struct {
		name string
		r    Run
		outs []Output
		want bool
	}{
		{"one left", ok, []Output{done, left}, true},
		{"all published", ok, []Output{done}, false},
		{"no outputs", ok, nil, false},
		{"undone", Run{Status: StatusSucceeded, Undone: true}, []Output{left}, false},
		{"failed", Run{Status: StatusFailed}, []Output{left}, false},
	} {
		if got := RollsForward(tc.r, tc.outs); got != tc.want {
			t.Errorf("%s: RollsForward = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		r    Run
		o    Output
		root string
		want bool
	}{
		{"published", ok, done, "/out", true},
		{"undone, not purged", Run{Status: StatusSucceeded, Undone: true}, done, "/out", true},
		{"purged", Run{Status: StatusSucceeded, Purged: true}, done, "/out", false},
		{"not published", ok, left, "/out", false},
		{"other root", ok, done, "/other", false},
		{"failed run", Run{Status: StatusFailed}, done, "/out", false},
	} {
		if got := PublishedAt(tc.r, tc.o, tc.root); got != tc.want {
			t.Errorf("%s: PublishedAt = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCheckOutputsAndFileRecords(t *testing.T) {
	rec := func(path string) FileRecord { return FileRecord{Ctx: "src", File: bookmark.File{Path: path}} }
	current := func(_, path string) bool { return path == "a" }
	for _, tc := range []struct {
		name     string
		c        Commit
		recorded []Output
		want     string // "" for no error
	}{
		{"fine", Commit{Run: Run{RunID: "r"}, Added: []FileRecord{rec("b")}, Superseded: []FileRecord{rec("a")},
			Outputs: []Output{{Sink: "s", Final: "x", RunID: "r"}}, Ranges: []RangeRecord{{Ctx: "t"}}}, nil, ""},
		{"supersede unknown", Commit{Superseded: []FileRecord{rec("b")}}, nil, "superseding b in source \"src\": no current record"},
		{"supersede twice", Commit{Superseded: []FileRecord{rec("a"), rec("a")}}, nil, "no current record"},
		{"add current", Commit{Added: []FileRecord{rec("a")}}, nil, "recording a in source \"src\": a current record exists"},
		{"add superseded", Commit{Added: []FileRecord{rec("a")}, Superseded: []FileRecord{rec("a")}}, nil, ""},
		{"add twice", Commit{Added: []FileRecord{rec("b"), rec("b")}}, nil, "a current record exists"},
		{"output of another run", Commit{Run: Run{RunID: "r"}, Outputs: []Output{{Final: "x", RunID: "q"}}}, nil, "output x names run q"},
		{"range of another run", Commit{Run: Run{RunID: "r"}, Ranges: []RangeRecord{{Ctx: "t", RunID: "q"}}}, nil, "range of source \"t\" names run q"},
		{"output twice", Commit{Outputs: []Output{{Sink: "s", Final: "x"}, {Sink: "s", Final: "x"}}}, nil, "recorded twice"},
		{"output recorded", Commit{Outputs: []Output{{Sink: "s", Final: "x"}}}, []Output{{Sink: "s", Final: "x"}}, "recorded twice"},
	} {
		err := CheckFileRecords(tc.c, current)
		if err == nil {
			err = CheckOutputs(tc.c, tc.recorded)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckBaseAndRunning(t *testing.T) {
	h := Head{Version: 3, RunID: "r3"}
	if err := CheckBase(Commit{Advance: true, BaseVersion: 3}, h); err != nil {
		t.Errorf("CheckBase at the head: %v", err)
	}
	if err := CheckBase(Commit{Advance: true, BaseVersion: 2}, h); !errors.Is(err, ErrVersionConflict) {
		t.Errorf("CheckBase below the head: %v, want ErrVersionConflict", err)
	}
	if err := CheckBase(Commit{BaseVersion: 2}, h); err != nil {
		t.Errorf("CheckBase of a commit that does not advance: %v", err)
	}
	if err := CheckRunning(Run{Status: StatusRunning}); err != nil {
		t.Errorf("CheckRunning(running): %v", err)
	}
	for _, st := range []string{StatusSucceeded, StatusFailed} {
		if err := CheckRunning(Run{Status: st}); err == nil || !strings.Contains(err.Error(), "run already "+st) {
			t.Errorf("CheckRunning(%s) = %v, want run already %s", st, err, st)
		}
	}
}
