package sqlstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// DecodeObject unmarshals data, which must be exactly one JSON object
// (json.Unmarshal alone accepts "null" as the zero value).
func DecodeObject(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("not a JSON object: %.40q", data)
	}
	return json.Unmarshal(trimmed, v)
}

// EncodeState serialises a source state for the source_states table.
func EncodeState(st bookmark.SourceState) ([]byte, error) {
	return json.Marshal(st)
}

// decodeState parses a stored source state. A corrupted one (anything but
// a JSON object that fits bookmark.SourceState) is an error naming the
// job, ctx and version, so that a user can find the row.
func decodeState(job, srcCtx string, version int64, data []byte) (bookmark.SourceState, error) {
	var st bookmark.SourceState
	if err := DecodeObject(data, &st); err != nil {
		return bookmark.SourceState{}, fmt.Errorf("decoding state of job %q source %q at version %d: %w", job, srcCtx, version, err)
	}
	return st, nil
}

// Summary is the JSON stored in runs.summary. JobFile is kept there by a
// schema without a job_file column (SQLite).
type Summary struct {
	Sources map[string]store.Count `json:"sources,omitempty"`
	Sinks   map[string]store.Count `json:"sinks,omitempty"`
	JobFile string                 `json:"job_file,omitempty"`
}

// FromNanos is a Unix-nanosecond column as a UTC time; 0 is the zero time.
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Nanos is a time as Unix nanoseconds; the zero time is 0.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// decodeOutput sets an output's kind and table target from their columns
// (target empty or NULL: none).
func decodeOutput(o *store.Output, kind string, target []byte) error {
	o.Kind = manifest.Kind(kind)
	if len(target) == 0 {
		return nil
	}
	o.Table = &manifest.Table{}
	if err := json.Unmarshal(target, o.Table); err != nil {
		return fmt.Errorf("decoding the table target of output %s: %w", o.Final, err)
	}
	return nil
}
