package source

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/job"
)

// Opener opens a job's source of one kind.
type Opener func(ctx context.Context, spec *job.Spec, src job.Source) (Source, error)

var openers = map[string]Opener{}

// Register makes a source kind available; called from the
// implementation's init.
func Register(kind string, open Opener) { openers[kind] = open }

// Kinds of sources in job files.
const (
	KindFiles = "files"
	KindTable = "sqltable"
)

// KindOf is the kind of a job-file source, as its block was decoded.
func KindOf(src job.Source) string {
	if src.Kind != "" {
		return src.Kind
	}
	return KindFiles
}

// Open opens src with its kind's opener.
func Open(ctx context.Context, spec *job.Spec, src job.Source) (Source, error) {
	kind := KindOf(src)
	open, ok := openers[kind]
	if !ok {
		return nil, fmt.Errorf("source %s: kind %s is not built into this binary", src.Ctx, kind)
	}
	return open(ctx, spec, src)
}
