package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// encodeState serialises a source state for the source_states table.
func encodeState(st bookmark.SourceState) ([]byte, error) {
	return json.Marshal(st)
}

// decodeState parses a source_states blob. A corrupted blob (anything but a
// JSON object that fits bookmark.SourceState) is an error naming the job,
// ctx and version, so that a user can find the row.
func decodeState(job, srcCtx string, version int64, data []byte) (bookmark.SourceState, error) {
	var st bookmark.SourceState
	if err := decodeObject(data, &st); err != nil {
		return bookmark.SourceState{}, fmt.Errorf("decoding state of job %q source %q at version %d: %w", job, srcCtx, version, err)
	}
	return st, nil
}

// summary is the JSON stored in runs.summary.
type summary struct {
	Sources map[string]store.Count `json:"sources,omitempty"`
	Sinks   map[string]store.Count `json:"sinks,omitempty"`
	JobFile string                 `json:"job_file,omitempty"`
}

// encodeSummary serialises a run's per-source and per-sink counts.
func encodeSummary(r store.Run) (string, error) {
	b, err := json.Marshal(summary{Sources: r.Sources, Sinks: r.Sinks, JobFile: r.JobFile})
	return string(b), err
}

// decodeSummary parses runs.summary; empty maps come back nil.
func decodeSummary(job, runID string, data string) (summary, error) {
	var s summary
	if err := decodeObject([]byte(data), &s); err != nil {
		return summary{}, fmt.Errorf("decoding summary of job %q run %s: %w", job, runID, err)
	}
	if len(s.Sources) == 0 {
		s.Sources = nil
	}
	if len(s.Sinks) == 0 {
		s.Sinks = nil
	}
	return s, nil
}

// decodeObject unmarshals data, which must be exactly one JSON object
// (json.Unmarshal alone accepts "null" as the zero value).
func decodeObject(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("not a JSON object: %.40q", data)
	}
	return json.Unmarshal(trimmed, v)
}
