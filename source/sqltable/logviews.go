package sqltable

import (
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// LogState is the bookmark of a changes: log source: the slot and
// publication it reads, the position (LSN) its committed runs delivered
// up to, and the slot's retained WAL and lag as the last run saw them.
type LogState struct {
	Slot        string `json:"slot"`
	Publication string `json:"publication"`
	// LSN is where the next run reads from: every transaction that
	// committed before it was delivered.
	LSN string `json:"lsn"`
	// RetainedWAL is the WAL the slot kept on the server (bytes), and
	// Lag the WAL written after the position the run read up to, both at
	// the run's start.
	RetainedWAL int64     `json:"slot_retained_wal_bytes"`
	Lag         int64     `json:"slot_lag_bytes"`
	CheckedAt   time.Time `json:"slot_checked_at"`
}

// Number is the slot's figure by its JSON name, as the last run saw it
// (bookmark.Numbered, for /metrics); ok false without a log position.
func (d StateDetail) Number(name string) (int64, bool) {
	if d.Log == nil {
		return 0, false
	}
	switch name {
	case "slot_retained_wal_bytes":
		return d.Log.RetainedWAL, true
	case "slot_lag_bytes":
		return d.Log.Lag, true
	}
	return 0, false
}

var _ bookmark.Numbered = StateDetail{}

func (l *LogState) show(w io.Writer, ctx string, d StateDetail) error {
	_, err := fmt.Fprintf(w, "  source %s (SQL table, changes: log): %d rows read by %d runs; position %s in slot %s "+
		"(publication %s); at the last run the slot retained %s of WAL, %s behind the server\n",
		ctx, d.Rows, d.Runs, l.LSN, l.Slot, l.Publication, humanize.IBytes(uint64(l.RetainedWAL)), humanize.IBytes(uint64(l.Lag)))
	return err
}

func (l *LogState) pairs() []bookmark.Pair {
	return []bookmark.Pair{
		{Label: "replication slot", Value: l.Slot, Test: "slot"},
		{Label: "publication", Value: l.Publication, Test: "publication"},
		{Label: "log position (LSN)", Value: l.LSN, Test: "lsn"},
		{Label: "slot's retained WAL (last run)", Value: l.RetainedWAL, Format: "bytes", Test: "slot-retained"},
		{Label: "slot's lag (last run)", Value: l.Lag, Format: "bytes", Test: "slot-lag"},
	}
}

// LogCount is what a changes: log run read: the changes by kind, and the
// log positions (LSN) it read after and up to; Snapshot when it read the
// table's snapshot (a first run).
type LogCount struct {
	Inserts  int64  `json:"inserts"`
	Updates  int64  `json:"updates"`
	Deletes  int64  `json:"deletes"`
	LSNAfter string `json:"lsn_after,omitempty"`
	LSNUpTo  string `json:"lsn_up_to,omitempty"`
	Snapshot bool   `json:"snapshot,omitempty"`
}

func (l *LogCount) add(n *LogCount) *LogCount {
	switch {
	case l == nil:
		return n
	case n == nil:
		return l
	}
	return &LogCount{Inserts: l.Inserts + n.Inserts, Updates: l.Updates + n.Updates, Deletes: l.Deletes + n.Deletes,
		LSNAfter: l.LSNAfter, LSNUpTo: n.LSNUpTo, Snapshot: l.Snapshot || n.Snapshot}
}

func (l *LogCount) summary(c store.Count) string {
	if l.Snapshot {
		return fmt.Sprintf("SQL table changes, snapshot of %d rows at %s", c.Rows, l.LSNUpTo)
	}
	return fmt.Sprintf("SQL table changes, %d rows (%d inserts, %d updates, %d deletes) after %s up to %s",
		c.Rows, l.Inserts, l.Updates, l.Deletes, l.LSNAfter, l.LSNUpTo)
}

func (l *LogCount) number(name string) int64 {
	switch name {
	case "inserts":
		return l.Inserts
	case "updates":
		return l.Updates
	case "deletes":
		return l.Deletes
	}
	return 0
}

// LogPreview is what `tidemark plan` shows of a changes: log source: the
// slot, the position the next run reads after, the WAL the slot retains
// and how far the position is behind the server, now.
type LogPreview struct {
	Slot        string `json:"slot"`
	Publication string `json:"publication"`
	LSN         string `json:"lsn,omitempty"`
	// Snapshot: the next run reads the table's snapshot (no bookmark yet).
	Snapshot    bool  `json:"snapshot,omitempty"`
	SlotExists  bool  `json:"slot_exists"`
	RetainedWAL int64 `json:"slot_retained_wal_bytes"`
	Lag         int64 `json:"slot_lag_bytes"`
}

func (l *LogPreview) show(w io.Writer, ctx string, rows int64) error {
	var line string
	if l.Snapshot {
		line = fmt.Sprintf("source %s (SQL table, changes: log): first run: a snapshot of %d rows, then slot %s (publication %s)", ctx, rows, l.Slot, l.Publication)
		if l.SlotExists {
			line += "; the slot exists without a bookmark and the run drops and creates it again"
		}
	} else {
		line = fmt.Sprintf("source %s (SQL table, changes: log): %d changes to read after %s from slot %s", ctx, rows, l.LSN, l.Slot)
	}
	if l.SlotExists {
		line += fmt.Sprintf("; the slot retains %s of WAL, %s behind the server", humanize.IBytes(uint64(l.RetainedWAL)), humanize.IBytes(uint64(l.Lag)))
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}
