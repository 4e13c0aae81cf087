package memsource

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// CountDetail is what a run read of a memory list: Items items after the
// first After.
type CountDetail struct {
	Items int64
	After int64
}

var _ store.CountDetail = CountDetail{}

type countJSON struct {
	Kind  bookmark.SourceKind `json:"kind"`
	Items int64               `json:"items"`
	After int64               `json:"after"`
}

// MarshalJSON writes the counts and the kind.
func (d CountDetail) MarshalJSON() ([]byte, error) {
	return json.Marshal(countJSON{Kind, d.Items, d.After})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *CountDetail) UnmarshalJSON(b []byte) error {
	var j countJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = CountDetail{j.Items, j.After}
	return nil
}

// DetailKind is Kind.
func (CountDetail) DetailKind() bookmark.SourceKind { return Kind }

// Add sums two batches: items add up from the first batch's start.
func (d CountDetail) Add(next store.CountDetail) store.CountDetail {
	n, _ := next.(CountDetail)
	return CountDetail{Items: d.Items + n.Items, After: d.After}
}

// Summary is the run summary's line.
func (d CountDetail) Summary(c store.Count) string {
	return fmt.Sprintf("memory list, %d items after item %d, %d rows", d.Items, d.After, c.Rows)
}

// PartsAreFiles is false: a list has no files.
func (CountDetail) PartsAreFiles() bool { return false }

// Notes: the summary under the run in `runs`.
func (d CountDetail) Notes(c store.Count) (before, after []string) {
	return []string{d.Summary(c)}, nil
}

// Number is a count by its JSON name.
func (d CountDetail) Number(name string) int64 {
	switch name {
	case "items":
		return d.Items
	case "after":
		return d.After
	}
	return 0
}

// StateDetail is what the bookmark keeps of a memory list: how many items
// it read, and in how many runs.
type StateDetail struct {
	Next int64
	Runs int64
}

var _ bookmark.StateDetail = StateDetail{}

type stateJSON struct {
	Next int64 `json:"next"`
	Runs int64 `json:"list_runs"`
}

// MarshalJSON writes the mark.
func (d StateDetail) MarshalJSON() ([]byte, error) { return json.Marshal(stateJSON(d)) }

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *StateDetail) UnmarshalJSON(b []byte) error {
	var j stateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = StateDetail(j)
	return nil
}

// DetailOf is s's memory-list detail (zero: none).
func DetailOf(s bookmark.SourceState) StateDetail {
	d, _ := s.Detail.(StateDetail)
	return d
}

// DetailKind is Kind.
func (StateDetail) DetailKind() bookmark.SourceKind { return Kind }

// Show is `bookmark show`'s line.
func (d StateDetail) Show(w io.Writer, ctx string, _ bookmark.SourceState) error {
	_, err := fmt.Fprintf(w, "  source %s (memory list): %d items read by %d runs\n", ctx, d.Next, d.Runs)
	return err
}

// ViewJSON is the state as stored.
func (d StateDetail) ViewJSON(s bookmark.SourceState) ([]byte, error) { return json.Marshal(s) }

// ListsFiles is false.
func (StateDetail) ListsFiles(bookmark.SourceState) bool { return false }

// Pairs are the items read and the runs that read them.
func (d StateDetail) Pairs(bookmark.SourceState, bookmark.Counts) []bookmark.Pair {
	return []bookmark.Pair{{Label: "items read", Value: d.Next, Format: "int", Test: "list-items"},
		{Label: "runs that read items", Value: d.Runs, Format: "int", Test: "list-runs"}}
}

// PreviewDetail is what `tidemark plan` shows of a memory list.
type PreviewDetail struct {
	Items int64 `json:"items"`
	After int64 `json:"after"`
}

var _ source.PreviewDetail = PreviewDetail{}

// MarshalJSON writes the counts and the kind.
func (d PreviewDetail) MarshalJSON() ([]byte, error) {
	type fields PreviewDetail
	return json.Marshal(struct {
		Kind bookmark.SourceKind `json:"kind"`
		fields
	}{Kind, fields(d)})
}

// DetailKind is Kind.
func (PreviewDetail) DetailKind() bookmark.SourceKind { return Kind }

// Show is `tidemark plan`'s text: the line, then the items.
func (d PreviewDetail) Show(w io.Writer, ctx string, p source.Preview) error {
	if _, err := fmt.Fprintf(w, "source %s (memory list): %d items to read after item %d\n", ctx, d.Items, d.After); err != nil {
		return err
	}
	return p.ShowList(w)
}

// Backlog is the items to read, as rows.
func (d PreviewDetail) Backlog(source.Preview) (rows int64, oldest time.Time) {
	return d.Items, time.Time{}
}
