// Package view holds the JSON shapes that the CLI prints with --json and
// that `tidemark serve` answers with: a run (runs --json, run --json) and a
// bookmark (bookmark show --json). Both the CLI and the server build them
// here, so that the two stay the same byte for byte.
package view

import (
	"time"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Results converts stored run records to `runs --json`'s objects, in the
// same order; never nil.
func Results(runs []store.Run) []tidemark.Result {
	out := make([]tidemark.Result, 0, len(runs))
	for _, r := range runs {
		out = append(out, tidemark.ResultOf(r))
	}
	return out
}

// Run is a run as the API shows it: `run --json`'s object and the run's
// Seq (its order within the job, for paging).
type Run struct {
	tidemark.Result
	Seq int64 `json:"seq"`
}

// RunOf converts a stored run record.
func RunOf(r store.Run) Run { return Run{Result: tidemark.ResultOf(r), Seq: r.Seq} }

// Runs converts stored run records, in the same order; never nil.
func Runs(runs []store.Run) []Run {
	out := make([]Run, 0, len(runs))
	for _, r := range runs {
		out = append(out, RunOf(r))
	}
	return out
}

// Bookmark is `bookmark show --json`.
type Bookmark struct {
	Job       string            `json:"job"`
	Version   int64             `json:"version"`
	RunID     string            `json:"run_id"`
	UpdatedAt *time.Time        `json:"updated_at,omitempty"`
	Sources   map[string]Source `json:"sources"`
}

// Source is a source's state in bookmark show --json and on the
// dashboard: the state, shown as its kind shows it
// (bookmark.StateDetail.ViewJSON).
type Source struct {
	bookmark.SourceState
}

// MarshalJSON writes the state as its kind shows it.
func (s Source) MarshalJSON() ([]byte, error) { return s.View().ViewJSON(s.SourceState) }

// BookmarkOf builds the bookmark view of a job's head and its source
// states.
func BookmarkOf(job string, head store.Head, states map[string]bookmark.SourceState) Bookmark {
	v := Bookmark{Job: job, Version: head.Version, RunID: head.RunID, Sources: map[string]Source{}}
	for k, s := range states {
		v.Sources[k] = SourceOf(s)
	}
	if !head.UpdatedAt.IsZero() {
		v.UpdatedAt = &head.UpdatedAt
	}
	return v
}

// SourceOf builds the view of one source state.
func SourceOf(s bookmark.SourceState) Source { return Source{SourceState: s} }
