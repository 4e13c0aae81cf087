package bookmark

import (
	"encoding/json"
	"time"
)

// File is the identity of one input object under a source's root.
type File struct {
	// Path is the object's key relative to the source root, '/'-separated.
	Path string `json:"path"`
	// Size in bytes.
	Size int64 `json:"size"`
	// MTime is the last-modified time in Unix nanoseconds (S3 gives seconds).
	MTime int64 `json:"mtime"`
	// ETag is the store's entity tag, empty where the store has none.
	ETag string `json:"etag,omitempty"`
}

// ModTime returns MTime as a time.Time.
func (f File) ModTime() time.Time { return time.Unix(0, f.MTime).UTC() }

// SameIdentity reports whether f and g are the same version of the same file:
// equal path, size and mtime, and equal ETags when both have one.
func (f File) SameIdentity(g File) bool {
	if f.Path != g.Path || f.Size != g.Size || f.MTime != g.MTime {
		return false
	}
	return f.ETag == "" || g.ETag == "" || f.ETag == g.ETag
}

// Column is one column of a source's recorded schema. Type holds the
// canonical text of an engine-neutral Type (see ParseType); states written
// before the type model may hold DuckDB spellings, which ParseType reads.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// SourceState is what a bookmark remembers of one source ctx apart from its
// per-file records (which the store keeps in indexed tables): a core, and
// what the source's kind keeps besides (Detail). Its JSON is one object,
// the detail's keys beside the core's (see state.go).
type SourceState struct {
	// Kind is the kind of source that wrote the state (KindFiles,
	// KindTable, or a kind registered with RegisterDetail).
	Kind SourceKind `json:"kind"`
	// Fingerprint identifies the source definition (path, format, options);
	// a change is reported instead of silently re-reading or skipping.
	Fingerprint string `json:"fingerprint"`
	// Describe is a human description of what the fingerprint covers.
	Describe string `json:"describe,omitempty"`
	// Schema is the schema inferred on the first run and applied later.
	Schema []Column `json:"schema,omitempty"`
	// SchemaVersions is the history of Schema: its first version and one
	// per run that changed it (schema_evolution: add_new_columns).
	SchemaVersions []SchemaVersion `json:"schema_versions,omitempty"`
	// Tracking is the tracking mode the state was written with.
	Tracking Tracking `json:"tracking,omitempty"`
	// HighWater is the timestamp tracking's mark, Unix nanoseconds.
	HighWater int64 `json:"high_water,omitempty"`
	// Band holds the files seen within max_band of HighWater (timestamp tracking).
	Band []File `json:"band,omitempty"`
	// Files and Bytes count the files recorded so far (for display); 0
	// for a SQL table source.
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// LastKey is the greatest key read under ordered listing: the next
	// run lists after it.
	LastKey string `json:"last_key,omitempty"`
	// Detail is what the source's kind keeps besides (nil: nothing, as a
	// file source's state), decoded by the kind (RegisterDetail).
	Detail StateDetail `json:"-"`
}

// JSONBytes is JSON held as bytes. It is marshalled as the JSON it holds,
// not base64-encoded as other bytes are (which would grow it by a third);
// bytes that are not valid JSON are marshalled as base64, which it reads
// back too.
type JSONBytes []byte

// MarshalJSON writes b as it is when it is JSON.
func (b JSONBytes) MarshalJSON() ([]byte, error) {
	if len(b) == 0 {
		return []byte("null"), nil
	}
	if json.Valid(b) {
		return b, nil
	}
	return json.Marshal([]byte(b))
}

// UnmarshalJSON reads JSON, or a base64 string of bytes.
func (b *JSONBytes) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		*b = nil
	case len(data) > 0 && data[0] == '"':
		var raw []byte
		if err := json.Unmarshal(data, &raw); err != nil {
			return err
		}
		*b = raw
	default:
		*b = append(JSONBytes(nil), data...)
	}
	return nil
}
