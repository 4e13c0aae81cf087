package files

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// CountDetail is what a file source counts of a run besides the core's
// files, bytes, rows and rejected rows.
type CountDetail struct {
	Modified  int64 `json:"modified,omitempty"`
	Missing   int64 `json:"missing,omitempty"`
	Empty     int64 `json:"empty,omitempty"`
	Deferred  int64 `json:"deferred,omitempty"`
	Unchanged int64 `json:"unchanged,omitempty"`
	// Future counts the files read whose mtime was ahead of the listing's
	// clock (timestamp tracking).
	Future int64 `json:"future,omitempty"`
	// InSinks counts the files left unread because they lie in a tidemark
	// sink's folder (one holding _tidemark/) below the source's root.
	InSinks int64 `json:"in_sinks,omitempty"`
	// ChangedDuringRead counts files that changed while the run read them:
	// left out of the run, unrecorded, read by the next run.
	ChangedDuringRead int64 `json:"changed_during_read,omitempty"`
}

var _ store.CountDetail = CountDetail{}

// countOf is c with d as its detail; a zero d is none, so that a count
// with nothing to say of files compares equal to its core.
func countOf(c store.Count, d CountDetail) store.Count {
	if d != (CountDetail{}) {
		c.Detail = d
	}
	return c
}

// CountDetailOf is c's file detail (zero: none, or not a file count).
func CountDetailOf(c store.Count) CountDetail {
	d, _ := c.Detail.(CountDetail)
	return d
}

// DetailKind is KindFiles.
func (CountDetail) DetailKind() bookmark.SourceKind { return bookmark.KindFiles }

// Add sums the counts of two batches.
func (d CountDetail) Add(next store.CountDetail) store.CountDetail {
	n, _ := next.(CountDetail)
	return CountDetail{Modified: d.Modified + n.Modified, Missing: d.Missing + n.Missing, Empty: d.Empty + n.Empty,
		Deferred: d.Deferred + n.Deferred, Unchanged: d.Unchanged + n.Unchanged, Future: d.Future + n.Future,
		InSinks: d.InSinks + n.InSinks, ChangedDuringRead: d.ChangedDuringRead + n.ChangedDuringRead}
}

// Summary is "N files, SIZE, N rows" and what else the run counted.
func (d CountDetail) Summary(c store.Count) string {
	line := fmt.Sprintf("%d files, %s, %d rows", c.Files, humanize.IBytes(uint64(c.Bytes)), c.Rows)
	return line + counted([]countedPart{
		{c.Rejected, "bad rows set aside"},
		{d.Empty, "empty files"},
		{d.Deferred, "files left for later runs"},
		{d.Missing, "files vanished before reading"},
		{d.ChangedDuringRead, "files changed while read (left for the next run)"},
		{d.InSinks, "files in other sinks' folders not read"},
		{d.Future, "files dated in the future"},
	})
}

// PartsAreFiles is true.
func (CountDetail) PartsAreFiles() bool { return true }

// Notes: the files changed while read, after the run's error.
func (d CountDetail) Notes(store.Count) (before, after []string) {
	if d.ChangedDuringRead > 0 {
		after = append(after, fmt.Sprintf("%d files changed while read, left for the next run", d.ChangedDuringRead))
	}
	return nil, after
}

// Number is a count by its JSON name.
func (d CountDetail) Number(name string) int64 {
	switch name {
	case "modified":
		return d.Modified
	case "missing":
		return d.Missing
	case "empty":
		return d.Empty
	case "deferred":
		return d.Deferred
	case "unchanged":
		return d.Unchanged
	case "future":
		return d.Future
	case "in_sinks":
		return d.InSinks
	case "changed_during_read":
		return d.ChangedDuringRead
	}
	return 0
}

// countedPart is one count of a summary line and what it counts.
type countedPart struct {
	N    int64
	What string
}

// counted is ", N what" for each part with a count, in order.
func counted(parts []countedPart) string {
	var b strings.Builder
	for _, p := range parts {
		if p.N > 0 {
			fmt.Fprintf(&b, ", %d %s", p.N, p.What)
		}
	}
	return b.String()
}

// PreviewDetail is what `tidemark plan` shows of a file source besides
// the core's counts and list.
type PreviewDetail struct {
	// InSinks counts the files left unread because they lie in a tidemark
	// sink's folder below the source's root.
	InSinks int64 `json:"in_sinks,omitempty"`
	// Future counts the files to read from the future (timestamp
	// tracking); RootMissing says the folder does not exist yet
	// (allow_missing: true).
	Future      int64 `json:"future,omitempty"`
	RootMissing bool  `json:"root_missing,omitempty"`
	// OldestUnread is the modification time of the oldest file the next
	// run would read (nil: nothing to read).
	OldestUnread *time.Time `json:"oldest_unread,omitempty"`
}

var _ source.PreviewDetail = (*PreviewDetail)(nil)

// DetailKind is KindFiles.
func (*PreviewDetail) DetailKind() bookmark.SourceKind { return bookmark.KindFiles }

// Show writes the counts, then what a user must hear of, then the files.
func (d *PreviewDetail) Show(w io.Writer, ctx string, p source.Preview) error {
	if err := p.ShowCounts(w, ctx); err != nil {
		return err
	}
	var b strings.Builder
	if d.RootMissing {
		b.WriteString("  the folder does not exist yet (allow_missing: true)\n")
	}
	for _, s := range p.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", s)
	}
	if d.InSinks > 0 {
		fmt.Fprintf(&b, "  (%d files in tidemark sink folders below the source are not read)\n", d.InSinks)
	}
	for _, f := range p.New {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Backlog is the oldest unread file's modification time; rows are not
// known before reading.
func (d *PreviewDetail) Backlog(source.Preview) (rows int64, oldest time.Time) {
	if d.OldestUnread != nil {
		oldest = *d.OldestUnread
	}
	return 0, oldest
}

// StateDetail shows a file source's bookmark state. A file source keeps
// nothing besides the core, whose tracking, high-water mark and band are
// the bookmark's rules' (package bookmark).
type StateDetail struct{}

var _ bookmark.StateDetail = StateDetail{}

// DetailKind is KindFiles.
func (StateDetail) DetailKind() bookmark.SourceKind { return bookmark.KindFiles }

// MarshalJSON writes no keys: a file state is its core.
func (StateDetail) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

// Show writes the tracking, the files recorded, the timestamp mark and the
// schema.
func (StateDetail) Show(w io.Writer, ctx string, s bookmark.SourceState) error {
	var b strings.Builder
	fmt.Fprintf(&b, "  source %s (%s tracking): %d files, %s recorded", ctx, s.Tracking, s.Files, humanize.IBytes(uint64(s.Bytes)))
	if s.Tracking == bookmark.TrackTimestamp {
		fmt.Fprintf(&b, ", high-water %s, %d in band", time.Unix(0, s.HighWater).UTC().Format(time.RFC3339Nano), len(s.Band))
	}
	b.WriteString("\n")
	if n := len(s.SchemaVersions); n > 0 {
		last := s.SchemaVersions[n-1]
		run := last.RunID
		if run == "" {
			run = "(none)"
		}
		fmt.Fprintf(&b, "    schema version %d of run %s\n", last.Version, run)
	}
	for _, c := range s.Schema {
		fmt.Fprintf(&b, "      %s %s\n", c.Name, c.Type)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ViewJSON is the state as stored.
func (StateDetail) ViewJSON(s bookmark.SourceState) ([]byte, error) { return json.Marshal(s) }

// ListsFiles is true under exact tracking, which records every file.
func (StateDetail) ListsFiles(s bookmark.SourceState) bool { return s.Tracking == bookmark.TrackExact }

// Pairs are the files and bytes recorded, the timestamp mark and band,
// and the last key of ordered listing.
// DiffPairs is what a bookmark diff compares of a file source's state
// (bookmark.Differ): its files and bytes, and its mark, band and last key
// where it has them.
func (StateDetail) DiffPairs(s bookmark.SourceState) []bookmark.Pair {
	out := []bookmark.Pair{{Label: "files processed", Value: s.Files, Format: "int"},
		{Label: "bytes recorded", Value: s.Bytes, Format: "bytes"}}
	if s.HighWater != 0 {
		out = append(out, bookmark.Pair{Label: "high-water mark", Value: s.HighWater, Format: "nanos"})
	}
	if len(s.Band) > 0 {
		out = append(out, bookmark.Pair{Label: "files in band", Value: len(s.Band), Format: "int"})
	}
	if s.LastKey != "" {
		out = append(out, bookmark.Pair{Label: "last key", Value: s.LastKey})
	}
	return out
}

func (StateDetail) Pairs(s bookmark.SourceState, _ bookmark.Counts) []bookmark.Pair {
	out := []bookmark.Pair{{Label: "files processed", Value: s.Files, Format: "int", Test: "bookmark-files"},
		{Label: "bytes recorded", Value: s.Bytes, Format: "bytes", Test: "bookmark-bytes"}}
	if s.Tracking == bookmark.TrackTimestamp {
		mark := bookmark.Pair{Label: "mark (high water)", Value: "none", Test: "high-water"}
		if s.HighWater != 0 {
			mark.Value, mark.Format = s.HighWater, "nanos"
		}
		out = append(out, mark, bookmark.Pair{Label: "files in band", Value: len(s.Band), Format: "int", Test: "band-count"})
	}
	if s.LastKey != "" {
		out = append(out, bookmark.Pair{Label: "last key (ordered listing)", Value: s.LastKey, Test: "last-key"})
	}
	return out
}
