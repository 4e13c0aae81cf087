package files

import (
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/source"
)

// TestSplitAddsUp: batches cut off a plan read its files in order, carry
// the listing's counts in the first batch only and each modified file's
// old record in the batch that reads it; each batch starts from the state
// the one before committed, so the last batch's state is the whole plan's
// (ordered listing's last key included).
func TestSplitAddsUp(t *testing.T) {
	hive := true
	src := &Source{location: "s3://b/in/", cfg: &Config{Format: "csv", Tracking: "exact", Listing: "ordered", HivePartitioning: &hive}}
	take := []bookmark.File{{Path: "a", Size: 1}, {Path: "b", Size: 2}, {Path: "c", Size: 4}, {Path: "d", Size: 8}, {Path: "e", Size: 16}}
	whole := &Plan{Ctx: "s", src: src, Take: take, Superseded: []bookmark.File{{Path: "d", Size: 3}},
		Unchanged: 7, Deferred: 2, Modified: 1, prev: bookmark.SourceState{Files: 10, Bytes: 100}, hasPrev: true}
	want := whole.NextState(nil)

	var p source.Plan = whole
	var got []string
	var counts []int64
	var state bookmark.SourceState
	for p.Pending() > 0 {
		var head source.Plan
		head, p = p.(source.Splitter).Split(2)
		fp := head.(*Plan)
		for _, f := range fp.Take {
			got = append(got, f.Path)
		}
		c := head.Count(&engine.SourceResult{})
		counts = append(counts, CountDetailOf(c).Deferred, CountDetailOf(c).Modified)
		a, _ := head.Advance("r", engine.SourceResult{})
		state = a.State
		if len(fp.Take) == 2 && fp.Take[1].Path == "d" && len(a.Superseded) != 1 {
			t.Errorf("the batch reading d supersedes %v, want d's old record", a.Superseded)
		}
	}
	if s := fmtList(got); s != "a b c d e" {
		t.Errorf("batches read %s, want a b c d e", s)
	}
	if want := []int64{2, 1, 0, 0, 0, 0}; !equal(counts, want) {
		t.Errorf("deferred and modified per batch: got %v, want %v (the first batch's only)", counts, want)
	}
	if state.Files != want.Files || state.Bytes != want.Bytes || state.LastKey != "e" {
		t.Errorf("state after the last batch: %d files %d bytes last key %q, want %d, %d and e (the whole plan's)",
			state.Files, state.Bytes, state.LastKey, want.Files, want.Bytes)
	}
}

func fmtList(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
