// Package tidemark is incremental ETL with job bookmarks: the library behind
// the tidemark command. Run executes a whole job, Plan says what its next
// run would read, Reset clears or rewinds its bookmark; Bookmarks gives a Go
// program the bookmark alone; BeginSession runs a Glue script's job. Run
// runs a job as the CLI does: its crawler, its run, its lineage events.
//
// A run goes through the contracts alone (source.Source, sink.Sink,
// engine.Engine, store.Store), one lifecycle for Run, a Session and
// Bookmarks (lifecycle.go): lease, mark dead runs, claim the sinks, recover
// committed but unpublished runs, plan, execute, stage, commit and publish
// (execute.go). Package all links in the implementations that ship with
// tidemark, and this package imports it.
package tidemark

import (
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/source/files"

	// The implementations built into tidemark: each registers itself.
	_ "github.com/tidemark-etl/tidemark/all"
)

// Errors a caller tells apart that the kinds define.
type (
	// SourceChangedError: a source's definition changed under its ctx.
	SourceChangedError = source.ChangedError
	// SinkOwnedError: a sink location belongs to another job or state.
	SinkOwnedError = sink.OwnedError
	// MissingSourceError: a file source's folder does not exist.
	MissingSourceError = files.MissingSourceError
)
