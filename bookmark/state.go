package bookmark

import (
	"encoding/json"
	"fmt"
	"io"
)

// StateDetail is a source kind's part of its bookmark state, written by
// the kind (source.Advance) and shown by it. A kind registers its decoder
// with RegisterDetail(RecordState, ...); it is given the state's keys
// that are not the core's.
type StateDetail interface {
	Detail
	// Show writes `bookmark show`'s text for source ctx, whose state s
	// it details, each line ending in a newline.
	Show(w io.Writer, ctx string, s SourceState) error
	// ViewJSON is the state as `bookmark show --json` and the dashboard
	// show it: s's JSON object, with what the kind shows besides.
	ViewJSON(s SourceState) ([]byte, error)
	// ListsFiles says whether the dashboard lists the files the source
	// read most recently (files recorded one by one: exact tracking).
	ListsFiles(s SourceState) bool
	// Pairs are what the dashboard shows of s besides its kind,
	// fingerprint and description; last is the source's count in the
	// job's newest run (nil: that run did not read it).
	Pairs(s SourceState, last Counts) []Pair
}

// Numbered is a StateDetail with figures that /metrics exports as gauges,
// by their JSON names (a changes: log source's "slot_retained_wal_bytes"
// and "slot_lag_bytes", as the last run saw them); ok is false when the
// state has no such figure.
type Numbered interface {
	Number(name string) (v int64, ok bool)
}

// StateNumber is figure name of s's detail (Numbered); ok false: none.
func StateNumber(s SourceState, name string) (int64, bool) {
	if n, ok := s.Detail.(Numbered); ok {
		return n.Number(name)
	}
	return 0, false
}

// Differ is a StateDetail that says what a bookmark diff (the dashboard's
// run page) compares of a state, labelled as the diff names the fields; a
// detail without it is compared by its Pairs.
type Differ interface {
	DiffPairs(s SourceState) []Pair
}

// DiffPairs is what a bookmark diff compares of s, as its kind says
// (Differ, else its Pairs with no count).
func DiffPairs(s SourceState) []Pair {
	v := s.View()
	if d, ok := v.(Differ); ok {
		return d.DiffPairs(s)
	}
	return v.Pairs(s, nil)
}

// Pair is one labelled value the dashboard shows of a source's state.
// Format says how Value reads: "int", "bytes", "nanos" (a Unix time in
// nanoseconds), or "" (text as it is).
type Pair struct {
	Label  string `json:"label"`
	Value  any    `json:"value"`
	Format string `json:"format,omitempty"`
	Test   string `json:"test"`
}

// Counts is a source's count in one run, by the names its JSON gives them
// (store.Count).
type Counts interface {
	Number(name string) int64
}

// stateOrder is the order of a state's JSON keys, which is the order of
// the fields the shipped kinds' states had when they were one struct.
var stateOrder = []string{"kind", "fingerprint", "describe", "schema", "schema_versions", "tracking",
	"high_water", "band", "files", "bytes", "runs", "rows", "last_key", "cursor"}

// stateCore is the core's keys.
var stateCore = []string{"kind", "fingerprint", "describe", "schema", "schema_versions", "tracking",
	"high_water", "band", "files", "bytes", "last_key"}

// stateJSON is the core's JSON: SourceState without its methods.
type stateJSON SourceState

// MarshalJSON writes the core and the detail as one object.
func (s SourceState) MarshalJSON() ([]byte, error) {
	core, err := json.Marshal(stateJSON(s))
	if err != nil {
		return nil, err
	}
	if s.Detail == nil {
		return core, nil
	}
	d, err := json.Marshal(s.Detail)
	if err != nil {
		return nil, fmt.Errorf("encoding the state of a %s source: %w", s.Kind, err)
	}
	return FlattenJSON(stateOrder, core, d)
}

// UnmarshalJSON reads the core and gives the other keys to the state's
// kind; a kind not built into this binary keeps them as a RawState.
func (s *SourceState) UnmarshalJSON(data []byte) error {
	core, rest, err := SplitJSON(data, stateCore)
	if err != nil {
		return fmt.Errorf("decoding a source state: %w", err)
	}
	var c stateJSON
	if err := json.Unmarshal(core, &c); err != nil {
		return fmt.Errorf("decoding a source state: %w", err)
	}
	*s = SourceState(c)
	s.Detail = nil
	if rest == nil {
		return nil
	}
	d, err := DecodeDetail(RecordState, s.Kind, rest)
	if err != nil {
		return err
	}
	s.Detail = stateDetailOf(d)
	return nil
}

// stateDetailOf is d as a StateDetail: a kind's own, or the fields of a
// kind this binary does not have.
func stateDetailOf(d Detail) StateDetail {
	if sd, ok := d.(StateDetail); ok {
		return sd
	}
	raw, _ := d.(RawDetail)
	return RawState{raw}
}

// View is the detail that shows s: its own, or its kind's zero detail.
func (s SourceState) View() StateDetail {
	if s.Detail != nil {
		return s.Detail
	}
	d, err := DecodeDetail(RecordState, s.Kind, []byte("{}"))
	if err != nil {
		return RawState{RawDetail{Of: s.Kind}}
	}
	return stateDetailOf(d)
}

// RawState is the state detail of a kind this binary does not have: kept
// as written, shown by the core.
type RawState struct{ RawDetail }

// Show writes the core's counts.
func (r RawState) Show(w io.Writer, ctx string, s SourceState) error {
	_, err := fmt.Fprintf(w, "  source %s (%s): %d files, %d bytes recorded\n", ctx, s.Kind, s.Files, s.Bytes)
	return err
}

// ViewJSON is the state as stored.
func (r RawState) ViewJSON(s SourceState) ([]byte, error) { return json.Marshal(s) }

// ListsFiles is false: what the kind records is not known here.
func (RawState) ListsFiles(SourceState) bool { return false }

// Pairs are the core's files and bytes.
func (RawState) Pairs(s SourceState, _ Counts) []Pair {
	return []Pair{{"files processed", s.Files, "int", "bookmark-files"}, {"bytes recorded", s.Bytes, "bytes", "bookmark-bytes"}}
}
