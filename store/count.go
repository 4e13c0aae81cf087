package store

import (
	"encoding/json"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Count is one source's or sink's totals in a run summary: a core that
// every kind counts, and the source kind's own counts (Detail). Its JSON
// is one object, the detail's keys beside the core's, as it was when the
// two were one struct.
type Count struct {
	Files    int64 `json:"files"`
	Bytes    int64 `json:"bytes"`
	Rows     int64 `json:"rows"`
	Rejected int64 `json:"rejected,omitempty"`
	Skipped  int64 `json:"skipped,omitempty"`
	// Detail is what the source's kind counts besides (nil: nothing, as a
	// sink's count; a file source's count with nothing more to say).
	Detail CountDetail `json:"-"`
}

// CountDetail is a source kind's part of its count, written by the kind
// (source.Plan.Count) and shown by it. A kind registers its decoder with
// bookmark.RegisterDetail(bookmark.RecordCount, ...). Values are
// comparable (no slices or maps), so counts compare with ==.
type CountDetail interface {
	bookmark.Detail
	// Add is the detail of a run read in batches: d's batches, then next's
	// (next nil: a zero detail of d's kind).
	Add(next CountDetail) CountDetail
	// Summary is the source's line of the run summary after
	// "source CTX: ", for the count c it details.
	Summary(c Count) string
	// PartsAreFiles says whether c.Files counts files (`tidemark runs`
	// adds them up); a SQL table's are the parts it was read in.
	PartsAreFiles() bool
	// Notes are the lines `tidemark runs` shows under a run for the
	// source, without the "source CTX: " that precedes each: those shown
	// before the run's error and those after it.
	Notes(c Count) (beforeError, afterError []string)
	// Number is one of the detail's counts by its JSON name (metrics);
	// 0 when the kind has no such count.
	Number(name string) int64
}

// countOrder is the order of a count's JSON keys, which is the order of
// the fields the shipped kinds' counts had when they were one struct.
var countOrder = []string{"files", "bytes", "rows", "rejected", "skipped", "modified", "missing", "empty",
	"deferred", "unchanged", "future", "in_sinks", "regressions", "null_keys", "late", "changed_during_read",
	"table", "keys_after", "keys_up_to", bookmark.KindKey}

// countCore is the core's keys.
var countCore = []string{"files", "bytes", "rows", "rejected", "skipped"}

type countJSON struct {
	Files    int64 `json:"files"`
	Bytes    int64 `json:"bytes"`
	Rows     int64 `json:"rows"`
	Rejected int64 `json:"rejected,omitempty"`
	Skipped  int64 `json:"skipped,omitempty"`
}

// MarshalJSON writes the core and the detail as one object.
func (c Count) MarshalJSON() ([]byte, error) {
	core, err := json.Marshal(countJSON{c.Files, c.Bytes, c.Rows, c.Rejected, c.Skipped})
	if err != nil {
		return nil, err
	}
	if c.Detail == nil {
		return core, nil
	}
	d, err := json.Marshal(c.Detail)
	if err != nil {
		return nil, fmt.Errorf("encoding the count of a %s source: %w", c.Detail.DetailKind(), err)
	}
	return bookmark.FlattenJSON(countOrder, core, d)
}

// UnmarshalJSON reads the core and gives the other keys to the kind that
// wrote them: the kind the keys name (bookmark.KindKey), a SQL table's
// count ("table": true), or else a file source's.
func (c *Count) UnmarshalJSON(data []byte) error {
	core, rest, err := bookmark.SplitJSON(data, countCore)
	if err != nil {
		return fmt.Errorf("decoding a count: %w", err)
	}
	var cj countJSON
	if err := json.Unmarshal(core, &cj); err != nil {
		return fmt.Errorf("decoding a count: %w", err)
	}
	*c = Count{Files: cj.Files, Bytes: cj.Bytes, Rows: cj.Rows, Rejected: cj.Rejected, Skipped: cj.Skipped}
	if rest == nil {
		return nil
	}
	kind, err := bookmark.KindOfFields(rest, legacyCountKind)
	if err != nil {
		return fmt.Errorf("decoding a count: %w", err)
	}
	d, err := bookmark.DecodeDetail(bookmark.RecordCount, kind, rest)
	if err != nil {
		return err
	}
	c.Detail = countDetailOf(d)
	return nil
}

// legacyCountKind tells the shipped kinds' counts apart.
func legacyCountKind(m map[string]json.RawMessage) bookmark.SourceKind {
	if string(m["table"]) == "true" {
		return bookmark.KindTable
	}
	return bookmark.KindFiles
}

// countDetailOf is d as a CountDetail: a kind's own, or the fields of a
// kind this binary does not have.
func countDetailOf(d bookmark.Detail) CountDetail {
	if cd, ok := d.(CountDetail); ok {
		return cd
	}
	raw, _ := d.(bookmark.RawDetail)
	return RawCount{raw}
}

// View is the detail that shows c: its own, or for a count without one a
// file source's zero detail (the kind counts were of before they had
// details).
func (c Count) View() CountDetail {
	if c.Detail != nil {
		return c.Detail
	}
	d, err := bookmark.DecodeDetail(bookmark.RecordCount, bookmark.KindFiles, []byte("{}"))
	if err != nil {
		return RawCount{bookmark.RawDetail{Of: bookmark.KindFiles}}
	}
	return countDetailOf(d)
}

// Add is c and then next, the counts of two batches of one run.
func (c Count) Add(next Count) Count {
	out := Count{Files: c.Files + next.Files, Bytes: c.Bytes + next.Bytes, Rows: c.Rows + next.Rows,
		Rejected: c.Rejected + next.Rejected, Skipped: c.Skipped + next.Skipped}
	switch {
	case c.Detail == nil:
		out.Detail = next.Detail
	default:
		out.Detail = c.Detail.Add(next.Detail)
	}
	return out
}

// Number is one of c's detail's counts by its JSON name (0: none).
func (c Count) Number(name string) int64 {
	if c.Detail == nil {
		return 0
	}
	return c.Detail.Number(name)
}

// RawCount is the count detail of a kind this binary does not have: kept
// as written, shown by its core.
type RawCount struct{ bookmark.RawDetail }

// Add keeps the first batch's fields: a kind this binary does not have
// cannot be summed.
func (r RawCount) Add(CountDetail) CountDetail { return r }

// Summary shows the core.
func (r RawCount) Summary(c Count) string {
	return fmt.Sprintf("%d files, %d bytes, %d rows (a %s source)", c.Files, c.Bytes, c.Rows, r.Of)
}

// PartsAreFiles is true: the core counts files.
func (RawCount) PartsAreFiles() bool { return true }

// Notes are none.
func (RawCount) Notes(Count) (before, after []string) { return nil, nil }
