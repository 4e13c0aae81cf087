package sqltable

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// CountDetail is what a SQL table source counts of a run besides the
// core's rows, parts (files) and bytes: the bookmark-key range the run
// read, (KeysAfter, KeysUpTo], each a tuple's key texts joined with ", "
// (KeysAfter empty: from the start), rows that appeared behind the mark
// (regressions), rows with a NULL key left out, and late rows read from
// the lookback window.
type CountDetail struct {
	Regressions int64
	NullKeys    int64
	Late        int64
	KeysAfter   string
	KeysUpTo    string
	// Log is what a changes: log run read (nil: a read by keys).
	Log *LogCount
	// Detect is what a changes: detect run found (nil: not detect).
	Detect *DetectCount
}

var _ store.CountDetail = CountDetail{}

// countJSON is CountDetail's JSON, which says "table": true.
type countJSON struct {
	Regressions int64  `json:"regressions,omitempty"`
	NullKeys    int64  `json:"null_keys,omitempty"`
	Late        int64  `json:"late,omitempty"`
	Table       bool   `json:"table,omitempty"`
	KeysAfter   string `json:"keys_after,omitempty"`
	KeysUpTo    string `json:"keys_up_to,omitempty"`
	*LogCount
	Detect *DetectCount `json:"detect,omitempty"`
}

// MarshalJSON writes the counts and "table": true.
func (d CountDetail) MarshalJSON() ([]byte, error) {
	return json.Marshal(countJSON{d.Regressions, d.NullKeys, d.Late, true, d.KeysAfter, d.KeysUpTo, d.Log, d.Detect})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *CountDetail) UnmarshalJSON(data []byte) error {
	var j countJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*d = CountDetail{j.Regressions, j.NullKeys, j.Late, j.KeysAfter, j.KeysUpTo, j.LogCount, j.Detect}
	return nil
}

// DetailKind is KindTable.
func (CountDetail) DetailKind() bookmark.SourceKind { return bookmark.KindTable }

// Add sums two batches: the counts add up, and the key range runs from
// the first batch's start to the last one's end.
func (d CountDetail) Add(next store.CountDetail) store.CountDetail {
	n, _ := next.(CountDetail)
	out := CountDetail{Regressions: d.Regressions + n.Regressions, NullKeys: d.NullKeys + n.NullKeys,
		Late: d.Late + n.Late, KeysAfter: d.KeysAfter, KeysUpTo: n.KeysUpTo}
	if n.KeysUpTo == "" {
		out.KeysUpTo = d.KeysUpTo
	}
	out.Log = d.Log.add(n.Log)
	out.Detect = d.Detect.add(n.Detect)
	return out
}

// Summary describes what a run read of a SQL table source: rows and the
// bookmark-key range, not the parts it was read in.
func (d CountDetail) Summary(c store.Count) string {
	if d.Log != nil {
		return d.Log.summary(c)
	}
	if d.Detect != nil {
		return d.Detect.summary(c)
	}
	line := fmt.Sprintf("SQL table, %d rows", c.Rows)
	switch {
	case d.KeysUpTo != "" && d.KeysAfter != "":
		line += fmt.Sprintf(", keys after (%s) up to (%s)", d.KeysAfter, d.KeysUpTo)
	case d.KeysUpTo != "":
		line += fmt.Sprintf(", keys from the start up to (%s)", d.KeysUpTo)
	case d.KeysAfter != "":
		line += fmt.Sprintf(", nothing after keys (%s)", d.KeysAfter)
	}
	for _, p := range []struct {
		n    int64
		what string
	}{
		{d.Late, "late rows from the lookback window"},
		{d.Regressions, "rows behind the bookmark not read"},
		{d.NullKeys, "rows with a NULL key left out"},
	} {
		if p.n > 0 {
			line += fmt.Sprintf(", %d %s", p.n, p.what)
		}
	}
	return line
}

// PartsAreFiles is false: a table is read in parts, which are no files.
func (CountDetail) PartsAreFiles() bool { return false }

// Notes: the summary line, before the run's error.
func (d CountDetail) Notes(c store.Count) (before, after []string) {
	return []string{d.Summary(c)}, nil
}

// Number is a count by its JSON name.
func (d CountDetail) Number(name string) int64 {
	switch name {
	case "regressions":
		return d.Regressions
	case "null_keys":
		return d.NullKeys
	case "late":
		return d.Late
	}
	if d.Log != nil {
		return d.Log.number(name)
	}
	if d.Detect != nil {
		return d.Detect.number(name)
	}
	return 0
}

// keysText is a key tuple as a count shows it.
func keysText(keys []string) string { return strings.Join(keys, ", ") }

// PreviewDetail is what `tidemark plan` shows of a SQL table source: the
// rows the next run would read (new and late), the key range (After nil:
// from the start; UpTo nil: nothing new), and rows seen behind the mark.
type PreviewDetail struct {
	Rows        int64    `json:"rows,omitempty"`
	After       []string `json:"after,omitempty"`
	UpTo        []string `json:"up_to,omitempty"`
	Regressions int64    `json:"regressions,omitempty"`
	// RegressionCheckOff says the job turns the regression check off
	// (regression_check: false): plan then counts none, which is not "0
	// regressions".
	RegressionCheckOff bool `json:"-"`
	// Log is the plan of a changes: log source (nil: a read by keys).
	*LogPreview
	// Detect is the plan of a changes: detect source (nil: not detect).
	Detect *DetectPreview `json:"detect,omitempty"`
}

var _ source.PreviewDetail = PreviewDetail{}

// MarshalJSON writes the fields and "table": true.
func (d PreviewDetail) MarshalJSON() ([]byte, error) {
	type fields PreviewDetail
	return json.Marshal(struct {
		Table bool `json:"table"`
		fields
	}{true, fields(d)})
}

// DetailKind is KindTable.
func (PreviewDetail) DetailKind() bookmark.SourceKind { return bookmark.KindTable }

// Show writes the rows and the key range the next run would read.
func (d PreviewDetail) Show(w io.Writer, ctx string, p source.Preview) error {
	if d.LogPreview != nil {
		if err := d.LogPreview.show(w, ctx, d.Rows); err != nil {
			return err
		}
		return p.ShowList(w)
	}
	if d.Detect != nil {
		if err := d.Detect.show(w, ctx); err != nil {
			return err
		}
		return p.ShowList(w)
	}
	var line string
	switch {
	case d.UpTo == nil:
		line = fmt.Sprintf("source %s (SQL table): nothing new to read", ctx)
		if d.After != nil {
			line += fmt.Sprintf(" after keys (%s)", keysText(d.After))
		}
	case d.After == nil:
		line = fmt.Sprintf("source %s (SQL table): %d rows to read, keys from the start up to (%s)", ctx, d.Rows, keysText(d.UpTo))
	default:
		line = fmt.Sprintf("source %s (SQL table): %d rows to read, keys after (%s) up to (%s)",
			ctx, d.Rows, keysText(d.After), keysText(d.UpTo))
	}
	if d.RegressionCheckOff {
		line += ", regression check off (regression_check: false)\n"
	} else {
		line += fmt.Sprintf(", %d regressions\n", d.Regressions)
	}
	_, err := io.WriteString(w, line)
	return err
}

// Backlog is the rows the next run would read; a table has no file times.
func (d PreviewDetail) Backlog(source.Preview) (rows int64, oldest time.Time) {
	return d.Rows, time.Time{}
}

// StateDetail is what a SQL table source's bookmark keeps besides the
// core: its key cursor, and the runs that read rows and the rows they
// read (for display; the core's files and bytes stay 0).
type StateDetail struct {
	Runs int64 `json:"runs,omitempty"`
	Rows int64 `json:"rows,omitempty"`
	// Cursor is the key cursor; opaque JSON, kept in the state as the
	// JSON it is (states written before hold it base64-encoded).
	Cursor bookmark.JSONBytes `json:"cursor,omitempty"`
	// Log is the position of a changes: log source (nil: a read by keys).
	Log *LogState `json:"log,omitempty"`
	// Detect is the range figures of a changes: detect source (nil: not
	// detect).
	Detect *DetectState `json:"detect,omitempty"`
}

var _ bookmark.StateDetail = StateDetail{}

// StateDetailOf is s's table detail (zero: none).
func StateDetailOf(s bookmark.SourceState) StateDetail {
	d, _ := s.Detail.(StateDetail)
	return d
}

// DetailKind is KindTable.
func (StateDetail) DetailKind() bookmark.SourceKind { return bookmark.KindTable }

// Show writes the rows read, by how many runs, and the cursor.
func (d StateDetail) Show(w io.Writer, ctx string, _ bookmark.SourceState) error {
	if d.Log != nil {
		return d.Log.show(w, ctx, d)
	}
	if d.Detect != nil {
		return d.Detect.show(w, ctx, d)
	}
	_, err := fmt.Fprintf(w, "  source %s (SQL table): %d rows read by %d runs; cursor %s\n", ctx, d.Rows, d.Runs, DescribeCursor(d.Cursor))
	return err
}

// ViewJSON shows the runs and rows under their names, and, as the JSON of
// a table source has always done, as files and bytes too.
func (d StateDetail) ViewJSON(s bookmark.SourceState) ([]byte, error) {
	s.Files, s.Bytes = d.Runs, d.Rows
	s.Detail = d
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	// The view's rows and runs are always there, 0 too, after the state's
	// keys.
	fields, err := json.Marshal(struct {
		Rows int64 `json:"rows"`
		Runs int64 `json:"runs"`
	}{d.Rows, d.Runs})
	if err != nil {
		return nil, err
	}
	return bookmark.FlattenJSON(viewOrder, b, fields)
}

// viewOrder puts rows and runs last in a table source's view.
var viewOrder = []string{"kind", "fingerprint", "describe", "schema", "schema_versions", "tracking",
	"high_water", "band", "files", "bytes", "last_key", "cursor", "rows", "runs"}

// ListsFiles is false: a table records key ranges, not files.
func (StateDetail) ListsFiles(bookmark.SourceState) bool { return false }

// Pairs are the rows read and by how many runs, the cursor's keys, mark,
// window and regression baseline, and the regressions of the job's
// newest run.
func (d StateDetail) Pairs(_ bookmark.SourceState, last bookmark.Counts) []bookmark.Pair {
	out := []bookmark.Pair{{Label: "rows read", Value: d.Rows, Format: "int", Test: "bookmark-rows"},
		{Label: "runs that read rows", Value: d.Runs, Format: "int", Test: "bookmark-runs"}}
	if d.Log != nil {
		return append(out, d.Log.pairs()...)
	}
	if d.Detect != nil {
		return append(out, d.Detect.pairs()...)
	}
	out = append(out, cursorPairs(d.Cursor)...)
	regressions := bookmark.Pair{Label: "regressions (last run)", Value: "not read by the last run", Test: "regressions"}
	if last != nil {
		regressions.Value, regressions.Format = last.Number("regressions"), "int"
	}
	return append(out, regressions)
}

// DiffPairs is what a bookmark diff compares of a SQL table's state
// (bookmark.Differ): the rows and runs, and the cursor's keys and mark (or
// the cursor itself when it is not an object).
func (d StateDetail) DiffPairs(bookmark.SourceState) []bookmark.Pair {
	out := []bookmark.Pair{{Label: "rows read", Value: d.Rows, Format: "int"},
		{Label: "runs that read rows", Value: d.Runs, Format: "int"}}
	if d.Log != nil {
		return append(out, bookmark.Pair{Label: "log position (LSN)", Value: d.Log.LSN})
	}
	if d.Detect != nil {
		return append(out, bookmark.Pair{Label: "delivered keys", Value: d.Detect.Keys, Format: "int"})
	}
	var v any
	if raw, err := bookmark.JSONBytes(d.Cursor).MarshalJSON(); err == nil {
		_ = json.Unmarshal(raw, &v)
	}
	switch c := v.(type) {
	case nil:
	case map[string]any:
		if k, ok := c["keys"]; ok && truthy(k) {
			out = append(out, bookmark.Pair{Label: "cursor keys", Value: joinJS(k)})
		}
		if m, ok := c["mark"]; ok && truthy(m) {
			out = append(out, bookmark.Pair{Label: "key mark", Value: joinJS(m)})
		}
	case []any:
	default:
		out = append(out, bookmark.Pair{Label: "cursor", Value: jsText(c)})
	}
	return out
}

// cursorPairs shows a cursor as the dashboard has: its keys and order,
// its mark, the lookback window and the rows behind it.
func cursorPairs(b []byte) []bookmark.Pair {
	// The cursor as the view's JSON has it (bytes that are not JSON
	// base64-encoded).
	var v any
	if raw, err := bookmark.JSONBytes(b).MarshalJSON(); err == nil {
		_ = json.Unmarshal(raw, &v)
	}
	var c map[string]any
	switch x := v.(type) {
	case nil:
		return []bookmark.Pair{{Label: "cursor", Value: "none", Test: "cursor"}}
	case map[string]any:
		c = x
	case []any:
		c = map[string]any{}
	default:
		return []bookmark.Pair{{Label: "cursor", Value: jsText(v), Test: "cursor"}}
	}
	keys := joinJS(c["keys"])
	if o, ok := c["order"]; ok && truthy(o) {
		keys += " (" + jsText(o) + ")"
	}
	mark := "nothing read yet"
	if m, ok := c["mark"]; ok && truthy(m) {
		mark = joinJS(m)
	}
	out := []bookmark.Pair{{Label: "keys", Value: keys, Test: "keys"}, {Label: "key mark", Value: mark, Test: "key-mark"}}
	if w, ok := c["window"]; ok && w != nil {
		text := jsText(w)
		if l, ok := c["lookback"]; ok && truthy(l) {
			text += " (lookback " + jsText(l) + ")"
		}
		out = append(out, bookmark.Pair{Label: "window from", Value: text, Test: "window"})
	}
	if n, ok := c["behind"]; ok && n != nil {
		out = append(out, bookmark.Pair{Label: "rows behind the window (regression baseline)", Value: n, Format: "int", Test: "behind"})
	}
	return out
}

// jsText is v as JavaScript's String(v) writes it.
func jsText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if e != nil {
				parts[i] = jsText(e)
			}
		}
		return strings.Join(parts, ",")
	case map[string]any:
		return "[object Object]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// joinJS is a list as JavaScript's join(", ") writes it (null items
// empty); not a list: "".
func joinJS(v any) string {
	l, _ := v.([]any)
	parts := make([]string, len(l))
	for i, x := range l {
		if x != nil {
			parts[i] = jsText(x)
		}
	}
	return strings.Join(parts, ", ")
}

// truthy is JavaScript's truthiness of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case float64:
		return x != 0
	case bool:
		return x
	}
	return true
}
