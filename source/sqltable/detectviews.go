package sqltable

import (
	"fmt"
	"io"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// DetectState is the bookmark of a changes: detect source: the figures of
// every range of its key snapshot as the last committed run delivered
// them, and where each range's keys and hashes are kept.
type DetectState struct {
	// Ranges is how many ranges the keys are hashed into (fixed at the
	// first run).
	Ranges int `json:"ranges"`
	// Keys is how many rows were delivered: the table's rows at the last
	// run that found a change.
	Keys int64 `json:"keys"`
	// Snapshot is the folder of the key snapshot.
	Snapshot string `json:"snapshot"`
	// Generations are the generation folders the ranges' files are in.
	Generations []string `json:"generations,omitempty"`
	// Figures are, per range: its rows, the two sums of its rows' hashes,
	// and the index in Generations of its file (-1: no file, no rows).
	Figures [][4]int64 `json:"figures"`
	// CheckedAt is when the run that wrote the state compared the table.
	CheckedAt time.Time `json:"checked_at"`
}

// figures are range i's figures.
func (d *DetectState) figures(i int) rangeFigures {
	if d == nil || i >= len(d.Figures) {
		return rangeFigures{}
	}
	f := d.Figures[i]
	return rangeFigures{Rows: f[0], Sum1: f[1], Sum2: f[2]}
}

// generation is the folder of range i's file ("" none).
func (d *DetectState) generation(i int) string {
	if d == nil || i >= len(d.Figures) || d.Figures[i][3] < 0 || int(d.Figures[i][3]) >= len(d.Generations) {
		return ""
	}
	return d.Generations[d.Figures[i][3]]
}

func (d *DetectState) show(w io.Writer, ctx string, sd StateDetail) error {
	_, err := fmt.Fprintf(w, "  source %s (SQL table, changes: detect): %d rows read by %d runs; %d keys delivered in %d ranges; key snapshot %s\n",
		ctx, sd.Rows, sd.Runs, d.Keys, d.Ranges, d.Snapshot)
	return err
}

func (d *DetectState) pairs() []bookmark.Pair {
	return []bookmark.Pair{
		{Label: "delivered keys", Value: d.Keys, Format: "int", Test: "detect-keys"},
		{Label: "key ranges", Value: int64(d.Ranges), Format: "int", Test: "detect-ranges"},
		{Label: "key snapshot", Value: d.Snapshot, Test: "detect-snapshot"},
	}
}

// DetectCount is what a changes: detect run found: the changes by kind,
// the ranges compared and those that differed, and the rows it fetched
// from them (an unchanged table: none).
type DetectCount struct {
	Inserts       int64 `json:"inserts"`
	Updates       int64 `json:"updates"`
	Deletes       int64 `json:"deletes"`
	Ranges        int64 `json:"ranges"`
	RangesChanged int64 `json:"ranges_changed"`
	Fetched       int64 `json:"rows_fetched"`
	// First: the run delivered the whole table (no bookmark yet).
	First bool `json:"first,omitempty"`
}

func (d *DetectCount) add(n *DetectCount) *DetectCount {
	switch {
	case d == nil:
		return n
	case n == nil:
		return d
	}
	return &DetectCount{Inserts: d.Inserts + n.Inserts, Updates: d.Updates + n.Updates, Deletes: d.Deletes + n.Deletes,
		Ranges: max(d.Ranges, n.Ranges), RangesChanged: d.RangesChanged + n.RangesChanged, Fetched: d.Fetched + n.Fetched,
		First: d.First || n.First}
}

func (d *DetectCount) summary(c store.Count) string {
	if d.First {
		return fmt.Sprintf("SQL table changes detected, first run: %d rows, every one an insert, in %d key ranges", c.Rows, d.Ranges)
	}
	return fmt.Sprintf("SQL table changes detected, %d rows (%d inserts, %d updates, %d deletes); %d of %d key ranges differed, %d rows fetched from them",
		c.Rows, d.Inserts, d.Updates, d.Deletes, d.RangesChanged, d.Ranges, d.Fetched)
}

func (d *DetectCount) number(name string) int64 {
	switch name {
	case "inserts":
		return d.Inserts
	case "updates":
		return d.Updates
	case "deletes":
		return d.Deletes
	case "ranges_changed":
		return d.RangesChanged
	case "rows_fetched":
		return d.Fetched
	}
	return 0
}

// DetectPreview is what `tidemark plan` shows of a changes: detect
// source: what the comparison would cost the next run, from the range
// figures alone (plan fetches no row): the ranges that differ from the
// bookmark's and the rows the run would fetch from them.
type DetectPreview struct {
	Ranges        int64 `json:"ranges"`
	RangesChanged int64 `json:"ranges_changed"`
	RowsToFetch   int64 `json:"rows_to_fetch"`
	// First: no bookmark yet, the run reads the whole table.
	First bool `json:"first,omitempty"`
}

func (d *DetectPreview) show(w io.Writer, ctx string) error {
	var line string
	if d.First {
		line = fmt.Sprintf("source %s (SQL table, changes: detect): first run: reads all %d rows, every one an insert, into %d key ranges", ctx, d.RowsToFetch, d.Ranges)
	} else {
		line = fmt.Sprintf("source %s (SQL table, changes: detect): %d of %d key ranges differ from what was delivered, %d rows to fetch from them",
			ctx, d.RangesChanged, d.Ranges, d.RowsToFetch)
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}
