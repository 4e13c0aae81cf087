package bookmark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// SourceKind names a kind of source as its records say it: the Kind of a
// SourceState, and the kind a run's count or a plan's preview is the
// detail of. A source kind registers the details it writes under its Kind
// (RegisterDetail), so that the records shared by all kinds carry a common
// core and a detail that the kind which wrote it decodes and shows.
type SourceKind string

// The kinds tidemark ships. Their records were written before kinds had a
// name of their own in every record, so they are told apart by what they
// hold (a count's "table": true); a newer kind writes "kind" into its
// details (see KindKey).
const (
	KindFiles SourceKind = "files"
	KindTable SourceKind = "table"
)

// KindKey is the JSON key under which a detail of a kind other than
// KindFiles and KindTable names its kind.
const KindKey = "kind"

// Detail is the kind-owned part of a record (a run's count, a source's
// state, a plan's preview). It is marshalled as a JSON object whose keys
// are flattened into the record's object, beside the core's.
type Detail interface {
	// DetailKind is the kind that wrote the detail.
	DetailKind() SourceKind
}

// Record names the records that carry a kind-owned detail.
type Record string

// The records a kind registers a decoder for.
const (
	RecordCount Record = "count" // store.Count: a source's line of a run
	RecordState Record = "state" // SourceState: a source's bookmark state
)

// DetailDecoder decodes a detail from the JSON object of a record's
// fields that are not the core's. It is given only the fields a kind
// wrote; an empty object is a zero detail.
type DetailDecoder func(fields []byte) (Detail, error)

// DecodeAs is the DetailDecoder of a detail that is a plain struct T,
// decoded from its fields as JSON.
func DecodeAs[T Detail]() DetailDecoder {
	return func(fields []byte) (Detail, error) {
		var d T
		if err := json.Unmarshal(fields, &d); err != nil {
			return nil, err
		}
		return d, nil
	}
}

var (
	detailsMu sync.RWMutex
	details   = map[Record]map[SourceKind]DetailDecoder{}
)

// RegisterDetail makes kind's details of rec decodable; a source kind's
// source.Register calls it with the kind's decoders. A later registration of the same kind and record replaces
// the earlier one.
func RegisterDetail(rec Record, kind SourceKind, decode DetailDecoder) {
	detailsMu.Lock()
	defer detailsMu.Unlock()
	if details[rec] == nil {
		details[rec] = map[SourceKind]DetailDecoder{}
	}
	details[rec][kind] = decode
}

// DecodeDetail decodes fields, a JSON object, as kind's detail of rec. A
// kind that is not built into this binary gets a RawDetail, which keeps
// the fields as they were written, so that a record passes through a
// program that does not know its kind unchanged.
func DecodeDetail(rec Record, kind SourceKind, fields []byte) (Detail, error) {
	detailsMu.RLock()
	decode, ok := details[rec][kind]
	detailsMu.RUnlock()
	if !ok {
		return RawDetail{Of: kind, JSON: string(fields)}, nil
	}
	d, err := decode(fields)
	if err != nil {
		return nil, fmt.Errorf("decoding the %s detail of a %s source: %w", rec, kind, err)
	}
	return d, nil
}

// Registered says whether kind's details of rec decode into the kind's
// own type in this binary.
func Registered(rec Record, kind SourceKind) bool {
	detailsMu.RLock()
	defer detailsMu.RUnlock()
	_, ok := details[rec][kind]
	return ok
}

// RawDetail is the detail of a kind not built into this binary: its fields
// as written, a JSON object. It is comparable, so records holding it are.
type RawDetail struct {
	Of   SourceKind
	JSON string
}

// DetailKind is the kind that wrote the fields.
func (r RawDetail) DetailKind() SourceKind { return r.Of }

// MarshalJSON writes the fields as they were read.
func (r RawDetail) MarshalJSON() ([]byte, error) {
	if r.JSON == "" {
		return []byte("{}"), nil
	}
	return []byte(r.JSON), nil
}

// Number is the integer field name of the fields (0: none, or not an
// integer).
func (r RawDetail) Number(name string) int64 {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(r.JSON), &m) != nil {
		return 0
	}
	var n int64
	if json.Unmarshal(m[name], &n) != nil {
		return 0
	}
	return n
}

// field is one key and value of a JSON object, in the order written.
type field struct {
	key   string
	value json.RawMessage
}

// objectFields reads a JSON object's fields in order.
func objectFields(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("want a JSON object, got %s", data)
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{key, v})
	}
	return out, nil
}

// FlattenJSON writes the JSON objects core and detail as one object: the
// keys of both, ordered as in order (the order the record's fields had
// when they were one struct, so its JSON stays byte for byte what it was),
// then the other keys as written, core's first. A key in both is written
// once, with detail's value. A nil or "null" detail adds nothing.
func FlattenJSON(order []string, core, detail []byte) ([]byte, error) {
	fs, err := objectFields(core)
	if err != nil {
		return nil, err
	}
	if len(detail) > 0 && string(detail) != "null" {
		ds, err := objectFields(detail)
		if err != nil {
			return nil, fmt.Errorf("flattening a detail: %w", err)
		}
		for _, d := range ds {
			if i := slices.IndexFunc(fs, func(f field) bool { return f.key == d.key }); i >= 0 {
				fs[i].value = d.value
				continue
			}
			fs = append(fs, d)
		}
	}
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(fs, func(a, b field) int { return rank(a.key) - rank(b.key) })
	return writeFields(fs), nil
}

// SplitJSON splits a record's JSON object into the core's fields (those
// named in core) and the others, each a JSON object in the order written;
// rest is nil when there are no others. The caller decodes core into its
// core struct and gives rest to the kind's decoder.
func SplitJSON(data []byte, core []string) (coreObj, rest []byte, err error) {
	fs, err := objectFields(data)
	if err != nil {
		return nil, nil, err
	}
	var c, r []field
	for _, f := range fs {
		if slices.Contains(core, f.key) {
			c = append(c, f)
		} else {
			r = append(r, f)
		}
	}
	coreObj = writeFields(c)
	if len(r) > 0 {
		rest = writeFields(r)
	}
	return coreObj, rest, nil
}

func writeFields(fs []field) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// KindOfFields is the kind a record's non-core fields were written by:
// the value of KindKey when they have it, otherwise legacy(fields) (how
// the shipped kinds' records are told apart).
func KindOfFields(rest []byte, legacy func(map[string]json.RawMessage) SourceKind) (SourceKind, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rest, &m); err != nil {
		return "", err
	}
	if raw, ok := m[KindKey]; ok {
		var k SourceKind
		if err := json.Unmarshal(raw, &k); err != nil {
			return "", fmt.Errorf("reading %q: %w", KindKey, err)
		}
		return k, nil
	}
	return legacy(m), nil
}
