package sink

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// Opener opens a job's sink of one kind.
type Opener func(ctx context.Context, spec *job.Spec, k job.Sink) (Sink, error)

// LocationOpener opens a place outputs of one kind were published to, from
// one of its output records.
type LocationOpener func(ctx context.Context, o store.Output) (Location, error)

type kind struct {
	open   Opener
	locate LocationOpener
}

var kinds = map[string]kind{}

// Kinds of sinks.
const (
	KindFiles = "files"
	KindTable = "sqltable"
)

// Register makes a sink kind available; called from the implementation's
// init.
func Register(name string, open Opener, locate LocationOpener) {
	kinds[name] = kind{open: open, locate: locate}
}

// KindOf is the kind of a job-file sink, as its block was decoded.
func KindOf(k job.Sink) string {
	if k.Kind != "" {
		return k.Kind
	}
	return KindFiles
}

// OutputKind is the kind of sink an output record was staged for.
func OutputKind(o store.Output) string {
	if o.Kind == manifest.TableLoad {
		return KindTable
	}
	return KindFiles
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
	return kd.open(ctx, spec, k)
}

// OpenLocation opens the place output o was published to.
func OpenLocation(ctx context.Context, o store.Output) (Location, error) {
	kd, ok := kinds[OutputKind(o)]
	if !ok {
		return nil, fmt.Errorf("output %s of run %s: sink kind %s is not built into this binary", o.Final, o.RunID, OutputKind(o))
	}
	return kd.locate(ctx, o)
}
