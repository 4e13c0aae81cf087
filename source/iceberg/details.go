package iceberg

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// StateDetail is what the bookmark keeps of an Iceberg source: the table
// (its name and uuid) and the last snapshot read, with its sequence
// number.
type StateDetail struct {
	Table      string
	UUID       string
	SnapshotID int64
	Sequence   int64
	// Snapshots counts the snapshots runs have read, over the bookmark's
	// life.
	Snapshots int64
	// Partial, when not 0, is the snapshot a batch stopped inside: its
	// files recorded are read, the others not yet (PartialWhole: the
	// table at that snapshot, a first run's).
	Partial      int64
	PartialWhole bool
}

var _ bookmark.StateDetail = StateDetail{}

type stateJSON struct {
	Table        string `json:"table"`
	UUID         string `json:"table_uuid"`
	SnapshotID   int64  `json:"snapshot_id"`
	Sequence     int64  `json:"sequence_number"`
	Snapshots    int64  `json:"snapshots_read"`
	Partial      int64  `json:"partial_snapshot,omitempty"`
	PartialWhole bool   `json:"partial_whole,omitempty"`
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

// DetailOf is s's Iceberg detail (zero: none).
func DetailOf(s bookmark.SourceState) StateDetail {
	d, _ := s.Detail.(StateDetail)
	return d
}

// DetailKind is Kind.
func (StateDetail) DetailKind() bookmark.SourceKind { return Kind }

// Show is `bookmark show`'s line.
func (d StateDetail) Show(w io.Writer, ctx string, s bookmark.SourceState) error {
	_, err := fmt.Fprintf(w, "  source %s (Iceberg table %s): read up to snapshot %d (sequence number %d), %d snapshots, "+
		"%d files, %s\n", ctx, d.Table, d.SnapshotID, d.Sequence, d.Snapshots, s.Files, humanize.IBytes(uint64(s.Bytes)))
	return err
}

// ViewJSON is the state as stored.
func (d StateDetail) ViewJSON(s bookmark.SourceState) ([]byte, error) { return json.Marshal(s) }

// ListsFiles is true: every data file read is recorded.
func (StateDetail) ListsFiles(bookmark.SourceState) bool { return true }

// Pairs are the table, the snapshot and the counts.
func (d StateDetail) Pairs(s bookmark.SourceState, _ bookmark.Counts) []bookmark.Pair {
	return []bookmark.Pair{{Label: "Iceberg table", Value: d.Table, Test: "iceberg-table"},
		{Label: "snapshot read up to", Value: fmt.Sprint(d.SnapshotID), Test: "iceberg-snapshot"},
		{Label: "sequence number", Value: d.Sequence, Format: "int", Test: "iceberg-sequence"},
		{Label: "snapshots read", Value: d.Snapshots, Format: "int", Test: "iceberg-snapshots"},
		{Label: "files processed", Value: s.Files, Format: "int", Test: "bookmark-files"},
		{Label: "bytes recorded", Value: s.Bytes, Format: "bytes", Test: "bookmark-bytes"}}
}

// CountDetail is what a run read of an Iceberg table: the snapshots after
// From up to To (From 0: the whole table at To), of which Snapshots were
// read and Skipped skipped.
type CountDetail struct {
	Table     string
	From, To  int64
	Snapshots int64
	Skipped   int64
	Whole     bool
}

var _ store.CountDetail = CountDetail{}

type countJSON struct {
	Kind      bookmark.SourceKind `json:"kind"`
	Table     string              `json:"table"`
	From      int64               `json:"after_snapshot"`
	To        int64               `json:"up_to_snapshot"`
	Snapshots int64               `json:"snapshots"`
	Skipped   int64               `json:"skipped_snapshots"`
	Whole     bool                `json:"whole_table,omitempty"`
}

// MarshalJSON writes the counts and the kind.
func (d CountDetail) MarshalJSON() ([]byte, error) {
	return json.Marshal(countJSON{Kind, d.Table, d.From, d.To, d.Snapshots, d.Skipped, d.Whole})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *CountDetail) UnmarshalJSON(b []byte) error {
	var j countJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = CountDetail{j.Table, j.From, j.To, j.Snapshots, j.Skipped, j.Whole}
	return nil
}

// DetailKind is Kind.
func (CountDetail) DetailKind() bookmark.SourceKind { return Kind }

// Add sums two batches: from the first's start to the second's end.
func (d CountDetail) Add(next store.CountDetail) store.CountDetail {
	n, ok := next.(CountDetail)
	if !ok {
		return d
	}
	return CountDetail{Table: d.Table, From: d.From, To: n.To, Snapshots: d.Snapshots + n.Snapshots,
		Skipped: d.Skipped + n.Skipped, Whole: d.Whole || n.Whole}
}

// Summary is the run summary's line.
func (d CountDetail) Summary(c store.Count) string {
	return fmt.Sprintf("Iceberg table %s, %s: %d files (%s), %d rows", d.Table, d.span(), c.Files,
		humanize.IBytes(uint64(c.Bytes)), c.Rows)
}

// span says which snapshots a run read.
func (d CountDetail) span() string {
	switch {
	case d.To == 0:
		return "no snapshot"
	case d.Whole:
		return fmt.Sprintf("the whole table at snapshot %d", d.To)
	}
	s := fmt.Sprintf("%d snapshots after %d up to %d", d.Snapshots, d.From, d.To)
	if d.Skipped > 0 {
		s += fmt.Sprintf(" (%d skipped)", d.Skipped)
	}
	return s
}

// PartsAreFiles is true: a run's parts are data files.
func (CountDetail) PartsAreFiles() bool { return true }

// Notes: the summary under the run in `runs`.
func (d CountDetail) Notes(c store.Count) (before, after []string) {
	return []string{d.Summary(c)}, nil
}

// Number is a count by its JSON name.
func (d CountDetail) Number(name string) int64 {
	switch name {
	case "snapshots":
		return d.Snapshots
	case "skipped_snapshots":
		return d.Skipped
	case "after_snapshot":
		return d.From
	case "up_to_snapshot":
		return d.To
	}
	return 0
}

// PreviewDetail is what `tidemark plan` shows of an Iceberg source: the
// snapshots the run would read or skip.
type PreviewDetail struct {
	Table     string         `json:"table"`
	From      int64          `json:"after_snapshot"`
	To        int64          `json:"up_to_snapshot"`
	Whole     bool           `json:"whole_table,omitempty"`
	Snapshots []SnapshotPlan `json:"snapshots"`
}

// SnapshotPlan is one snapshot in a plan: its files, or why it is skipped.
type SnapshotPlan struct {
	ID        int64  `json:"snapshot_id"`
	Sequence  int64  `json:"sequence_number"`
	Operation string `json:"operation"`
	Files     int64  `json:"files"`
	Rows      int64  `json:"rows"`
	Skip      string `json:"skipped,omitempty"`
}

var _ source.PreviewDetail = PreviewDetail{}

// MarshalJSON writes the plan and the kind.
func (d PreviewDetail) MarshalJSON() ([]byte, error) {
	type fields PreviewDetail
	return json.Marshal(struct {
		Kind bookmark.SourceKind `json:"kind"`
		fields
	}{Kind, fields(d)})
}

// DetailKind is Kind.
func (PreviewDetail) DetailKind() bookmark.SourceKind { return Kind }

// Show is `tidemark plan`'s text: the line, the snapshots, then the files.
func (d PreviewDetail) Show(w io.Writer, ctx string, p source.Preview) error {
	span := CountDetail{From: d.From, To: d.To, Whole: d.Whole}
	for _, s := range d.Snapshots {
		if s.Skip != "" {
			span.Skipped++
		} else {
			span.Snapshots++
		}
	}
	if _, err := fmt.Fprintf(w, "source %s (Iceberg table %s): %d files to read (%s) from %s, %d files left for later runs\n",
		ctx, d.Table, p.Files, humanize.IBytes(uint64(p.Bytes)), span.span(), p.Deferred); err != nil {
		return err
	}
	for _, s := range d.Snapshots {
		line := fmt.Sprintf("  snapshot %d (%s, sequence number %d): %d files, %d rows", s.ID, s.Operation, s.Sequence, s.Files, s.Rows)
		if s.Skip != "" {
			line = fmt.Sprintf("  snapshot %d (%s, sequence number %d): skipped, %s", s.ID, s.Operation, s.Sequence, s.Skip)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return p.ShowList(w)
}

// Backlog is the rows of the files to read (Iceberg counts them) and no
// time.
func (d PreviewDetail) Backlog(source.Preview) (rows int64, oldest time.Time) {
	for _, s := range d.Snapshots {
		rows += s.Rows
	}
	return rows, time.Time{}
}
