package job

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Config is the configuration block of one source, sink or engine kind:
// a pointer to a struct whose fields carry a yaml tag (the key) and a doc
// tag (its one-line description in the job-file reference, docs/reference/job-file.md). The job
// envelope decodes the block into it, unknown keys being errors, then
// calls ApplyDefaults and Validate. The struct is owned by its component's
// package, which registers its kind once, from an init function, with
// source.Register, sink.Register or engine.Register; those call
// RegisterSource, RegisterSink and RegisterEngine here, so that job
// imports none of them.
type Config interface {
	// ApplyDefaults fills the fields left unset. It is called once, after
	// decoding and before Validate; s is the whole job, its own defaults
	// applied (a block may inherit one, e.g. on_bad_record). The reference
	// takes each key's default from what ApplyDefaults sets on an empty
	// block, so the two cannot differ.
	ApplyDefaults(s *Spec)
	// Validate reports every problem of the block through c, each at its
	// key; it must not stop at the first. It does no I/O.
	Validate(c *Check)
}

// Kind is one registered kind of source, sink or engine.
type Kind struct {
	// Name is the kind's name: "files", "sqltable", "duckdb".
	Name string
	// Marker is, for sources and sinks, the key whose presence in a block
	// selects this kind ("connection" for SQL tables); "" marks the
	// default kind, taken when no other kind's marker is present. Engines
	// are selected by name instead.
	Marker string
	// Anchor is the key every block of this kind has when it is not the
	// Marker: "path" for files. A block holding the anchors of two kinds
	// is told to give one or the other, not both.
	Anchor string
	// Noun names the kind's blocks in messages and the reference:
	// "file sources (path:)", "SQL tables (connection:)".
	Noun string
	// New returns an empty block (a pointer to the kind's struct).
	New func() Config
	// CheckReader and CheckWriter are, for an engine, its checks of a
	// source's reader options and a sink's writer options for a format
	// (nil: it checks none).
	CheckReader func(format string, opts map[string]any) error
	CheckWriter func(format string, opts map[string]any) error
}

type registry struct {
	what  string // "source", "sink", "engine"
	kinds []Kind
}

var (
	sourceKinds = &registry{what: "source"}
	sinkKinds   = &registry{what: "sink"}
	engineKinds = &registry{what: "engine"}
)

// RegisterSource makes a source kind known to the job file; called from
// the component's init. It panics on a second kind of the same name or
// marker.
func RegisterSource(k Kind) { sourceKinds.add(k) }

// RegisterSink makes a sink kind known to the job file, as RegisterSource.
func RegisterSink(k Kind) { sinkKinds.add(k) }

// RegisterEngine makes an engine kind known to the job file (`engine:
// NAME` or `engine: {NAME: {...}}`); its Marker is unused.
func RegisterEngine(k Kind) { engineKinds.add(k) }

// SourceKinds, SinkKinds and EngineKinds return the registered kinds, by
// name.
func SourceKinds() []Kind { return sourceKinds.sorted() }

// SinkKinds returns the registered sink kinds, by name.
func SinkKinds() []Kind { return sinkKinds.sorted() }

// EngineKinds returns the registered engine kinds, by name.
func EngineKinds() []Kind { return engineKinds.sorted() }

func (r *registry) add(k Kind) {
	for _, o := range r.kinds {
		if o.Name == k.Name || (r != engineKinds && o.Marker == k.Marker) {
			panic(fmt.Sprintf("job: %s kind %q registered twice (or with the marker of %q)", r.what, k.Name, o.Name))
		}
	}
	r.kinds = append(r.kinds, k)
}

func (r *registry) sorted() []Kind {
	out := slices.Clone(r.kinds)
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (r *registry) byName(name string) (Kind, bool) {
	for _, k := range r.kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// forKeys picks the kind of a block from its keys: the kind whose marker
// is present, else the default kind.
func (r *registry) forKeys(has func(key string) bool) (Kind, bool) {
	for _, k := range r.sorted() {
		if k.Marker != "" && has(k.Marker) {
			return k, true
		}
	}
	return r.byName(r.defaultName())
}

func (r *registry) defaultName() string {
	for _, k := range r.kinds {
		if k.Marker == "" {
			return k.Name
		}
	}
	return ""
}

// forConfig finds the kind whose blocks have the dynamic type of c.
func (r *registry) forConfig(c Config) (Kind, bool) {
	if c == nil {
		return Kind{}, false
	}
	t := reflect.TypeOf(c)
	for _, k := range r.kinds {
		if reflect.TypeOf(k.New()) == t {
			return k, true
		}
	}
	return Kind{}, false
}

// otherKey reports which other kind of r knows key (for a message that
// says where the key belongs).
func (r *registry) otherKey(self, key string) (Kind, bool) {
	for _, k := range r.sorted() {
		if k.Name == self {
			continue
		}
		if _, ok := fieldByTag(reflect.ValueOf(k.New()).Elem(), key); ok {
			return k, true
		}
	}
	return Kind{}, false
}

func (r *registry) names() []string {
	var out []string
	for _, k := range r.sorted() {
		out = append(out, k.Name)
	}
	return out
}

// anchor is the key every block of k has: its Anchor, else its Marker.
func (k Kind) anchor() string {
	if k.Anchor != "" {
		return k.Anchor
	}
	return k.Marker
}
