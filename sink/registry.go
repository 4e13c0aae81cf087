package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// Opener opens a job's sink of one kind.
type Opener func(ctx context.Context, spec *job.Spec, k job.Sink) (Sink, error)

// LocationOpener opens a place outputs of one kind were published to, from
// one of its output records.
type LocationOpener func(ctx context.Context, o store.Output) (Location, error)

// Kind describes one kind of sink. Its package registers it once, from its
// init, with Register; that makes its block known to the job file too.
type Kind struct {
	// Name is the kind's name: "files", "sqltable".
	Name string
	// Marker is the key whose presence in a sink block selects this kind
	// ("connection" for SQL tables); "" marks the default kind, taken when
	// no other kind's marker is present.
	Marker string
	// Anchor is the key every block of this kind has when it is not the
	// Marker ("path" for files).
	Anchor string
	// Noun names the kind's blocks in messages and the reference: "file
	// sinks (path:)".
	Noun string
	// Config returns an empty block: a pointer to the kind's struct, whose
	// yaml and doc tags are its keys and their reference.
	Config func() job.Config
	// Open opens a job's sink of this kind; it touches nothing.
	Open Opener
	// Locate opens the place an output record of this kind was staged for,
	// without the job file.
	Locate LocationOpener
	// Outputs are the kinds of output records the kind stages, and so
	// publishes and purges (manifest.File, manifest.Upload). Each belongs
	// to one sink kind.
	Outputs []manifest.Kind
}

var kinds = map[string]Kind{}

// Kinds of sinks.
const (
	KindFiles = "files"
	KindTable = "sqltable"
)

// Register makes a sink kind available to the job file, to Open and, for
// its output records, to OpenLocation; called from the implementation's
// init. It panics on a second kind of the same name or marker, or one that
// claims another's output kind.
func Register(k Kind) {
	for _, o := range kinds {
		for _, out := range k.Outputs {
			if slices.Contains(o.Outputs, out) {
				panic(fmt.Sprintf("sink: kinds %q and %q both publish %q outputs", o.Name, k.Name, out))
			}
		}
	}
	job.RegisterSink(job.Kind{Name: k.Name, Marker: k.Marker, Anchor: k.Anchor, Noun: k.Noun, New: k.Config})
	kinds[k.Name] = k
}

// KindOf is the kind of a job-file sink, as its block was decoded.
func KindOf(k job.Sink) string {
	if k.Kind != "" {
		return k.Kind
	}
	return KindFiles
}

// OutputKind is the kind of sink an output record was staged for: the
// registered kind that publishes its manifest kind. A record without one
// (written before records had kinds) is a file sink's; "" is a kind no
// sink built into this binary publishes.
func OutputKind(o store.Output) string {
	for _, k := range kinds {
		if slices.Contains(k.Outputs, o.Kind) {
			return k.Name
		}
	}
	if o.Kind == "" {
		return KindFiles
	}
	return ""
}

// LocationKey names the place an output was staged for: outputs with the
// same key are published (and purged) together, by one Location.
func LocationKey(o store.Output) string {
	if o.Table != nil {
		b, _ := json.Marshal(o.Table)
		return "table " + string(b)
	}
	return o.Root
}

// Open opens k with its kind's opener.
func Open(ctx context.Context, spec *job.Spec, k job.Sink) (Sink, error) {
	kd, ok := kinds[KindOf(k)]
	if !ok {
		return nil, fmt.Errorf("sink %s: kind %s is not built into this binary", k.Ctx, KindOf(k))
	}
	return kd.Open(ctx, spec, k)
}

// OpenLocation opens the place output o was published to.
func OpenLocation(ctx context.Context, o store.Output) (Location, error) {
	name := OutputKind(o)
	kd, ok := kinds[name]
	if !ok {
		return nil, fmt.Errorf("output %s of run %s: no sink kind built into this binary publishes %q outputs", o.Final, o.RunID, o.Kind)
	}
	return kd.Locate(ctx, o)
}
