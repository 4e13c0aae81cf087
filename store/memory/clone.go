package memory

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// cloneRun copies a run; empty count maps come back nil, as a backend that
// stores them encoded returns them.
func cloneRun(r store.Run) store.Run {
	r.Sources, r.Sinks = cloneCounts(r.Sources), cloneCounts(r.Sinks)
	return r
}

// cloneCounts copies a count map, nil if empty.
func cloneCounts(m map[string]store.Count) map[string]store.Count {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// cloneOutput copies an output, its table target included.
func cloneOutput(o store.Output) store.Output {
	if o.Table != nil {
		t := *o.Table
		t.MergeKeys = cloneStrings(t.MergeKeys)
		o.Table = &t
	}
	return o
}

// cloneOutputs copies outputs.
func cloneOutputs(outs []store.Output) []store.Output {
	var c []store.Output
	for _, o := range outs {
		c = append(c, cloneOutput(o))
	}
	return c
}

// cloneAction copies an action; empty partitions come back nil.
func cloneAction(a store.SinkAction) store.SinkAction {
	a.Partitions = cloneStrings(a.Partitions)
	return a
}

// cloneStrings copies a string slice, nil if empty.
func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// cloneRange copies a range record.
func cloneRange(r store.RangeRecord) store.RangeRecord {
	r.Range = append([]byte{}, r.Range...)
	return r
}

// encodeStates encodes source states as a backend stores them (JSON), so
// that they come back as every backend returns them.
func encodeStates(states map[string]bookmark.SourceState) (map[string][]byte, error) {
	enc := make(map[string][]byte, len(states))
	for k, st := range states {
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		enc[k] = b
	}
	return enc, nil
}

// decodeStates decodes what encodeStates made.
func decodeStates(enc map[string][]byte) (map[string]bookmark.SourceState, error) {
	states := make(map[string]bookmark.SourceState, len(enc))
	for k, b := range enc {
		var st bookmark.SourceState
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, err
		}
		states[k] = st
	}
	return states, nil
}
