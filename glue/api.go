// Package glue is tidemark's face for Glue-style scripts: a small JSON API
// over HTTP on a loopback port (the bookmark API, for any language) that
// begins a run, plans its sources, readies its sinks' staging folders,
// commits and aborts; and the launcher of `tidemark glue run`, which starts
// that API, puts tidemark's awsglue Python package on the script's path and
// runs the script.
//
// Every request carries the header "Authorization: Bearer TOKEN" with the
// token the server was started with. Every verb is idempotent on the run
// id: asking again returns the first answer. Errors are {"error",
// "exit_code"} (exit_code as tidemark's: 1 a failed run, 2 a usage or job
// error, 3 the job's lease held — then also "holder") with an HTTP status
// of 400 (usage), 409 (lease held) or 500 (failure).
package glue

import (
	"github.com/tidemark-etl/tidemark/bookmark"
)

// BeginRequest is POST /v1/begin: begin a run of a job. A second begin for
// a job with a run open on this server returns that run.
type BeginRequest struct {
	Job string `json:"job"`
	// Mode is enable, disable or pause in Glue's spelling or tidemark's
	// (job-bookmark-enable, enable, ...); default enable.
	Mode string `json:"mode,omitempty"`
	// From and To (pause only) re-read what runs (From, To] read.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Reads are the URL schemes the program reads itself ("file", "s3"):
	// inputs of other schemes are downloaded to local files first.
	// Default: ["file"].
	Reads []string `json:"reads,omitempty"`
}

// BeginResponse describes the run begun.
type BeginResponse struct {
	RunID   string `json:"run_id"`
	Job     string `json:"job"`
	Mode    string `json:"mode"`
	Version int64  `json:"version"` // the bookmark version the run reads against
}

// SourceRequest is POST /v1/source: plan one source for the run and
// ready its input.
type SourceRequest struct {
	RunID string `json:"run_id"`
	// Ctx is Glue's transformation_ctx: the source's bookmark. Empty: no
	// bookmark, every file is read and nothing is recorded (Glue's rule).
	Ctx string `json:"ctx"`
	// Paths is the folder to read: one local path or s3:// URL (Glue's
	// connection_options "paths").
	Paths []string `json:"paths,omitempty"`
	// Catalog names a table of the catalog to read instead of Paths.
	Catalog *CatalogRef `json:"catalog,omitempty"`
	// Format is csv, json or parquet (Glue's format).
	Format string `json:"format,omitempty"`
	// Options are Glue's format_options (withHeader, separator, quoteChar,
	// escaper): they say how the source reads, and a change of them under
	// the same ctx is a changed source.
	Options map[string]any `json:"options,omitempty"`
	// Recurse reads the folders below Paths too (Glue's "recurse"; default
	// true here, as the folder is the source).
	Recurse *bool `json:"recurse,omitempty"`
	// Exclusions are globs of files never read (Glue's "exclusions").
	Exclusions []string `json:"exclusions,omitempty"`
	// BoundedFiles and BoundedSize cap one run's input, oldest first
	// (Glue's boundedFiles and boundedSize).
	BoundedFiles int   `json:"bounded_files,omitempty"`
	BoundedSize  int64 `json:"bounded_size,omitempty"`
}

// CatalogRef names a catalog table, with Glue's push_down_predicate.
type CatalogRef struct {
	Database          string `json:"database"`
	Table             string `json:"table"`
	PushDownPredicate string `json:"push_down_predicate,omitempty"`
}

// SourceResponse is what the program reads for one source.
type SourceResponse struct {
	Ctx string `json:"ctx"`
	// Name is what the run records the source as: Ctx, or the name made up
	// for a source without one. CommitRequest.Sources is keyed by it.
	Name   string `json:"name"`
	Format string `json:"format"`
	// Options are the source's reader options as tidemark records them.
	Options map[string]any `json:"options,omitempty"`
	// Files are the inputs to read, oldest first; none when nothing is new.
	Files []InputFile `json:"files"`
	// Schema is the source's recorded schema (engine-neutral types), to
	// read with; null on the first run, when the program infers it.
	Schema []bookmark.Column `json:"schema"`
}

// InputFile is one input of a source.
type InputFile struct {
	// Location is where to read it: a local path, or a URL of a scheme
	// the program said it reads.
	Location string `json:"location"`
	// Key is its path below the source's folder.
	Key  string `json:"key"`
	Size int64  `json:"size"`
	// Partition holds the values of the key=value folders in Key, for
	// columns of those names.
	Partition map[string]string `json:"partition,omitempty"`
}

// SinkRequest is POST /v1/sink: ready one sink's staging folder.
type SinkRequest struct {
	RunID string `json:"run_id"`
	// Ctx names the sink in the run's records (Glue's transformation_ctx
	// of the write; default: one made from Path).
	Ctx string `json:"ctx,omitempty"`
	// Path is the sink's folder: a local path or an s3:// URL.
	Path string `json:"path"`
	// Format is parquet (default), csv or json.
	Format string `json:"format,omitempty"`
	// PartitionKeys are the columns whose values name key=value folders.
	PartitionKeys []string `json:"partition_keys,omitempty"`
	// Options are the writer options (compression).
	Options map[string]any `json:"options,omitempty"`
}

// SinkResponse says where to write.
type SinkResponse struct {
	Ctx string `json:"ctx"`
	// Location is the local folder to write the sink's files into (the
	// writer creates it or writes into it; nothing there is visible until
	// the commit publishes it).
	Location string `json:"location"`
	Format   string `json:"format"`
}

// CommitRequest is POST /v1/commit: publish what the run wrote and advance
// every source's bookmark, in one state-store transaction.
type CommitRequest struct {
	RunID string `json:"run_id"`
	// Sources report, per source Name, the rows read and the schema read
	// with (both optional).
	Sources map[string]SourceReport `json:"sources,omitempty"`
}

// SourceReport is what the program says of one source it read.
type SourceReport struct {
	Rows   int64             `json:"rows,omitempty"`
	Schema []bookmark.Column `json:"schema,omitempty"`
}

// AbortRequest is POST /v1/abort: end the run without committing.
type AbortRequest struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason,omitempty"`
}

// ErrorResponse is the body of every failed request.
type ErrorResponse struct {
	Error    string  `json:"error"`
	ExitCode int     `json:"exit_code"`
	Holder   *Holder `json:"holder,omitempty"`
}

// Holder is who holds the job's lease (exit code 3).
type Holder struct {
	RunID   string `json:"run_id"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Started string `json:"started"`
	Expires string `json:"expires"`
}
