package sourcetest

import (
	"errors"
	"reflect"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// testPlanChangesNothing: planning, again and again, for a run or for
// `tidemark plan` (counting), changes neither the input nor the state,
// and plans the same input each time.
func testPlanChangesNothing(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a", "2:b")
	before, head := w.in.Snapshot(w.t), w.head()
	var first [2]*source.Preview
	for i := range 4 {
		p := w.planCounting(s, i%2 == 1)
		if p.Pending() == 0 {
			w.t.Fatalf("plan %d: nothing pending with new input", i+1)
		}
		pv := p.Preview()
		if f := first[i%2]; f == nil {
			first[i%2] = &pv
		} else if !reflect.DeepEqual(pv, *f) {
			w.t.Fatalf("plan %d previews %+v, plan %d %+v", i+1, pv, i-1, *f)
		}
	}
	if after := w.in.Snapshot(w.t); after != before {
		w.t.Fatalf("planning changed the input:\nbefore %s\nafter  %s", before, after)
	}
	if h := w.head(); h != head {
		w.t.Fatalf("planning changed the bookmark: head %+v, was %+v", h, head)
	}
	if runs, err := w.st.Runs(w.t.Context(), jobName, store.RunQuery{}); err != nil || len(runs) != 0 {
		w.t.Fatalf("planning recorded runs: %v, %v", runs, err)
	}
	w.equal("the run after the plans", w.mustRun(s), []string{"1:a", "2:b"})
	before = w.in.Snapshot(w.t)
	if p := w.plan(s); p.Pending() != 0 {
		w.t.Fatalf("a plan after the run has %d pending", p.Pending())
	}
	if after := w.in.Snapshot(w.t); after != before {
		w.t.Fatalf("planning changed the input:\nbefore %s\nafter  %s", before, after)
	}
}

func (w *world) head() store.Head {
	w.t.Helper()
	h, err := w.st.Head(w.t.Context(), jobName)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// testAdvance: Advance records what the run read (its files or key
// range), and the next run reads only what is new since.
func testAdvance(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a", "2:b")
	p := w.plan(s)
	rows, res, retry, err := w.execute(p, false, nil)
	if err != nil || retry {
		w.t.Fatalf("reading: retry %v, %v", retry, err)
	}
	w.equal("run 1", rows, []string{"1:a", "2:b"})
	a := w.commit(p, res)
	if len(a.Added)+len(a.Ranges) == 0 {
		w.t.Fatalf("Advance recorded nothing the run read: %+v", a)
	}
	if prev, ok := w.prev(); !ok || !reflect.DeepEqual(prev, a.State) {
		w.t.Fatalf("the bookmark holds %+v (%v), want Advance's state %+v", prev, ok, a.State)
	}
	w.in.Add(w.t, "3:c")
	w.equal("run 2", w.mustRun(s), []string{"3:c"})
	w.equal("run 3", w.mustRun(s), nil)
}

// testChangedDuringRead: input changed while the engine read it is read
// once, by this run (Done asks for a retry without it) or the next, and
// nothing else is read twice.
func testChangedDuringRead(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a")
	w.in.Add(w.t, "2:b")
	first, err := w.run(s, func() { w.in.Modify(w.t, "3:c") })
	if err != nil {
		w.t.Fatalf("run 1: %v", err)
	}
	second := w.mustRun(s)
	w.readOnce("runs 1 and 2", append(first, second...))
	w.equal("run 3", w.mustRun(s), nil)
}

// testChangedDuringLastAttempt: on the last attempt Done never asks for a
// retry: it fails the run (nothing is committed) or settles it; either
// way the next run reads what is left, every row once.
func testChangedDuringLastAttempt(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a")
	w.in.Add(w.t, "2:b")
	p := w.plan(s)
	var first []string
	rows, res, _, err := w.execute(p, true, func() { w.in.Modify(w.t, "3:c") })
	if err == nil {
		w.commit(p, res)
		first = rows
	} else if h := w.head(); h.Version != 0 {
		w.t.Fatalf("a failed last attempt left the bookmark at version %d", h.Version)
	}
	second := w.mustRun(s)
	w.readOnce("the last attempt and the next run", append(first, second...))
}

// testVanishedDuringRead: input deleted while the engine read it does not
// fail the run: it is dropped (and read again if it comes back) or was
// read whole before it went; the rest is read once.
func testVanishedDuringRead(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a")
	w.in.Add(w.t, "2:b")
	first, err := w.run(s, func() { w.in.Remove(w.t) })
	if err != nil {
		w.t.Fatalf("run 1: %v", err)
	}
	got := append(first, w.mustRun(s)...)
	n := map[string]int{}
	for _, r := range got {
		n[r]++
	}
	if n["1:a"] != 1 || n["2:b"] > 1 || len(got) != 1+n["2:b"] {
		w.t.Fatalf("runs 1 and 2: read %q, want 1:a once and 2:b (deleted during run 1) at most once", got)
	}
	w.equal("run 3", w.mustRun(s), nil)
}

// readOnce checks the rows runs read of inputs 1:a and 2:b, the latter
// modified to hold 3:c too while the first run read it: 1:a and 3:c once;
// 2:b once, or twice when the first run read the input whole before it
// changed (a download) and the next read its new version whole
// (on_modified: reprocess, the default).
func (w *world) readOnce(what string, got []string) {
	w.t.Helper()
	n := map[string]int{}
	for _, r := range got {
		n[r]++
	}
	if len(n) != 3 || n["1:a"] != 1 || n["3:c"] != 1 || n["2:b"] < 1 || n["2:b"] > 2 ||
		(n["2:b"] == 2 && len(got) != 4) {
		w.t.Fatalf("%s: read %q, want 1:a and 3:c once, 2:b once (or twice: its old and new versions)", what, got)
	}
}

// testSplit: a Splitter's head reads the first inputs in the plan's order,
// the rest the others from the state the head committed; together they
// read what the plan would have, once. A plan that is no Splitter reads
// it in one run.
func testSplit(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a")
	w.in.Add(w.t, "2:b")
	w.in.Add(w.t, "3:c")
	all := []string{"1:a", "2:b", "3:c"}
	p := w.plan(s)
	sp, ok := p.(source.Splitter)
	if !ok {
		w.equal("a plan that is no Splitter", w.mustRun(s), all)
		return
	}
	head, rest := sp.Split(1)
	var got []string
	for i, b := range []source.Plan{head, rest} {
		if b.Pending() == 0 {
			w.t.Fatalf("batch %d: nothing pending", i+1)
		}
		rows, res, retry, err := w.execute(b, false, nil)
		if err != nil || retry {
			w.t.Fatalf("batch %d: retry %v, %v", i+1, retry, err)
		}
		if i == 0 {
			w.equal("the head, the first input", rows, []string{"1:a"})
		}
		w.commit(b, res)
		got = append(got, rows...)
	}
	w.equal("head and rest", got, all)
	if p := w.plan(s); p.Pending() != 0 {
		w.t.Fatalf("after both batches %d pending", p.Pending())
	}
	// Cut at or past the end: the rest has nothing to read.
	w.in.Add(w.t, "4:d")
	p = w.plan(s)
	head, rest = p.(source.Splitter).Split(int(p.Pending()) + 1)
	if rest.Pending() != 0 {
		w.t.Fatalf("Split past the end: the rest has %d pending", rest.Pending())
	}
	rows, res, _, err := w.execute(head, false, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.commit(head, res)
	w.equal("the head of a cut past the end", rows, []string{"4:d"})
}

// testCheckDefinition: a bookmark written for one definition refuses
// another (a *source.ChangedError from CheckDefinition, or from Plan for
// a source that can tell only once connected); the same one passes.
func testCheckDefinition(w *world) {
	s := w.source(w.in.Block)
	w.in.Add(w.t, "1:a")
	w.mustRun(s)
	prev, _ := w.prev()
	if err := w.source(w.in.Block).CheckDefinition(w.t.Context(), prev); err != nil {
		w.t.Fatalf("the same definition: %v", err)
	}
	changed := w.source(w.in.Changed)
	err := changed.CheckDefinition(w.t.Context(), prev)
	if err == nil {
		_, err = changed.Plan(w.t.Context(), source.Request{Job: jobName, Mode: bookmark.ModeEnable, State: w.st,
			Prev: prev, HasPrev: true, Now: time.Now()})
	}
	var ce *source.ChangedError
	if !errors.As(err, &ce) {
		w.t.Fatalf("a changed definition: %v, want a *source.ChangedError", err)
	}
}
