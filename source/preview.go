package source

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Preview is what the next run would read of one source (`tidemark plan`):
// a core every kind fills, and the kind's own part (Detail). Its JSON is
// one object, the detail's keys beside the core's, as it was when the two
// were one struct.
type Preview struct {
	Files     int64    `json:"files"`
	Bytes     int64    `json:"bytes"`
	New       []string `json:"new"`
	Modified  int64    `json:"modified"`
	Unchanged int64    `json:"unchanged"`
	Deferred  int64    `json:"deferred"`
	// Warnings are what the run would warn about.
	Warnings []string `json:"warnings,omitempty"`
	// Detail is the kind's part of the preview (nil: none).
	Detail PreviewDetail `json:"-"`
}

// PreviewDetail is a source kind's part of its preview, which shows it.
type PreviewDetail interface {
	bookmark.Detail
	// Show writes `tidemark plan`'s text for the source ctx whose preview
	// p it details, each line ending in a newline.
	Show(w io.Writer, ctx string, p Preview) error
	// Backlog is what the next run would read, for the metrics: rows
	// (0: unknown before reading) and the modification time of the
	// oldest input (zero: unknown).
	Backlog(p Preview) (rows int64, oldest time.Time)
}

// previewOrder is the order of a preview's JSON keys, which is the order
// of the fields the shipped kinds' previews had when they were one struct.
var previewOrder = []string{"files", "bytes", "new", "modified", "unchanged", "deferred", "in_sinks", "table",
	"rows", "after", "up_to", "regressions", "future", "root_missing", "warnings", "oldest_unread", bookmark.KindKey}

// previewJSON is the core's JSON.
type previewJSON struct {
	Files     int64    `json:"files"`
	Bytes     int64    `json:"bytes"`
	New       []string `json:"new"`
	Modified  int64    `json:"modified"`
	Unchanged int64    `json:"unchanged"`
	Deferred  int64    `json:"deferred"`
	Warnings  []string `json:"warnings,omitempty"`
}

// MarshalJSON writes the core and the detail as one object.
func (p Preview) MarshalJSON() ([]byte, error) {
	core, err := json.Marshal(previewJSON{p.Files, p.Bytes, p.New, p.Modified, p.Unchanged, p.Deferred, p.Warnings})
	if err != nil {
		return nil, err
	}
	if p.Detail == nil {
		return core, nil
	}
	d, err := json.Marshal(p.Detail)
	if err != nil {
		return nil, fmt.Errorf("encoding the preview of a %s source: %w", p.Detail.DetailKind(), err)
	}
	return bookmark.FlattenJSON(previewOrder, core, d)
}

// Show writes `tidemark plan`'s text for source ctx: its kind's, or for
// a preview without a detail the core's counts.
func (p Preview) Show(w io.Writer, ctx string) error {
	if p.Detail != nil {
		return p.Detail.Show(w, ctx, p)
	}
	if err := p.ShowCounts(w, ctx); err != nil {
		return err
	}
	return p.ShowList(w)
}

// ShowCounts writes the line of a preview's counts: "source CTX: N files
// to read (SIZE), N unchanged, N modified, N left for later runs".
func (p Preview) ShowCounts(w io.Writer, ctx string) error {
	_, err := fmt.Fprintf(w, "source %s: %d files to read (%s), %d unchanged, %d modified, %d left for later runs\n",
		ctx, p.Files, humanize.IBytes(uint64(p.Bytes)), p.Unchanged, p.Modified, p.Deferred)
	return err
}

// ShowList writes the preview's warnings and the inputs the run would read.
func (p Preview) ShowList(w io.Writer) error {
	for _, s := range p.Warnings {
		if _, err := fmt.Fprintf(w, "  warning: %s\n", s); err != nil {
			return err
		}
	}
	for _, f := range p.New {
		if _, err := fmt.Fprintf(w, "  %s\n", f); err != nil {
			return err
		}
	}
	return nil
}

// Backlog is what the next run would read, for the metrics: files, bytes,
// rows (0: unknown) and the oldest input's modification time (zero:
// unknown).
func (p Preview) Backlog() (files, bytes, rows int64, oldest time.Time) {
	if p.Detail != nil {
		rows, oldest = p.Detail.Backlog(p)
	}
	return p.Files, p.Bytes, rows, oldest
}
