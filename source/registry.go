package source

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
)

// Opener opens a job's source of one kind.
type Opener func(ctx context.Context, spec *job.Spec, src job.Source) (Source, error)

// Kind describes one kind of source. Its package registers it once, from
// its init, with Register; that makes its block known to the job file
// too.
type Kind struct {
	// Name is the kind's name: "files", "sqltable".
	Name string
	// Marker is the key whose presence in a source block selects this
	// kind ("connection" for SQL tables); "" marks the default kind, taken
	// when no other kind's marker is present.
	Marker string
	// Anchor is the key every block of this kind has when it is not the
	// Marker ("path" for files).
	Anchor string
	// Noun names the kind's blocks in messages and the reference: "file
	// sources (path:)".
	Noun string
	// Config returns an empty block: a pointer to the kind's struct, whose
	// yaml and doc tags are its keys and their reference.
	Config func() job.Config
	// Open opens a job's source of this kind; it touches nothing.
	Open Opener
	// Records is the kind its records name (bookmark.KindFiles,
	// bookmark.KindTable, or the kind's own for a new kind: a
	// SourceState's Kind, the kind of a count's and a preview's detail);
	// Count and State decode its details of a run's count and of its
	// bookmark state (bookmark.DecodeAs for a plain struct).
	Records      bookmark.SourceKind
	Count, State bookmark.DetailDecoder
}

var kinds = map[string]Kind{}

// Register makes a source kind available to the job file and to Open;
// called from the implementation's init. It panics on a second kind of the
// same name or marker.
func Register(k Kind) {
	job.RegisterSource(job.Kind{Name: k.Name, Marker: k.Marker, Anchor: k.Anchor, Noun: k.Noun, New: k.Config})
	if k.Count != nil {
		bookmark.RegisterDetail(bookmark.RecordCount, k.Records, k.Count)
	}
	if k.State != nil {
		bookmark.RegisterDetail(bookmark.RecordState, k.Records, k.State)
	}
	kinds[k.Name] = k
}

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
	k, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("source %s: kind %s is not built into this binary", src.Ctx, kind)
	}
	return k.Open(ctx, spec, src)
}
