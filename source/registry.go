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
	// Reset, optional, is what a bookmark reset does to what a source of
	// this kind holds outside the state store (Resetter).
	Reset Resetter
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

// ResetRequest is what a bookmark reset asks of a source kind about one
// source ctx: what becomes of what the source holds outside the state
// store (a changes: log source's replication slot).
type ResetRequest struct {
	Job, Ctx string
	// Spec and Source are the job file and the source's block; nil when
	// the reset was given the job's name, not its file (the kind then
	// cannot reach what it holds, and says so).
	Spec   *job.Spec
	Source *job.Source
	// Now is the source's state at the bookmark's head, After the state
	// the reset leaves (--to-run); HasNow, HasAfter false: none (a reset
	// that clears the bookmark leaves none).
	Now, After       bookmark.SourceState
	HasNow, HasAfter bool
	// DryRun changes nothing: the answer says what the reset would do.
	DryRun bool
}

// Resetter is a Kind's part of a bookmark reset. The reset calls it with
// DryRun before it changes anything (an error refuses the reset, nothing
// changed) and again without once the store's reset is committed; it
// returns one sentence of what it did or would do ("" nothing to say). It
// is idempotent: a second call finds its work done and says so.
type Resetter func(ctx context.Context, req ResetRequest) (string, error)

// ResetHook is the Resetter of the kind of src (a job file's block; nil
// for none), else of the kind whose records are state's kind; nil if the
// kind has none.
func ResetHook(src *job.Source, state bookmark.SourceState) Resetter {
	if src != nil {
		return kinds[KindOf(*src)].Reset
	}
	for _, k := range kinds {
		if k.Reset != nil && k.Records == state.Kind {
			return k.Reset
		}
	}
	return nil
}
