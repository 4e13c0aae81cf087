package engine

import (
	"context"
	"slices"
)

// Engine executes plans. An Engine is used by one run at a time: Execute
// calls do not overlap, and Close is called once, when no Execute runs.
type Engine interface {
	// Capabilities says which locations the engine reads and writes
	// itself. It is constant for the engine's life.
	Capabilities() Caps

	// Execute runs p: it reads every source's Files, defines the
	// transforms over the sources and earlier transforms, and writes the
	// rows of each sink's From under the sink's Location, in the sink's
	// format, split into files (one folder per value of PartitionBy's
	// columns); with quarantine, it writes rejected rows under
	// p.Rejects/<source ctx>. It writes nothing anywhere else and never
	// touches bookmark state.
	//
	// On success the Result lists every file written under each sink's
	// Location with its rows and bytes, and the rows read (and rejected)
	// per source. On error nothing it wrote may be published: the caller
	// deletes the sinks' Locations and Rejects. Errors about input are
	// *InputError when the engine can tell the file (and line); a
	// canceled ctx stops the work and the error wraps ctx.Err().
	//
	// Execute has no effect but what it writes under those locations:
	// once the caller has deleted them, it may be called again with the
	// same plan (a retry after an input changed while it was read), and
	// gives the same rows. A plan whose sources are streams
	// (Source.Stream) cannot be retried as is: the pipes are consumed.
	Execute(ctx context.Context, p Plan) (Result, error)

	// Close releases the engine's resources (its temporary files among
	// them). Files written under sink Locations stay.
	Close() error
}

// Caps is what an engine reads and writes itself. The runner gives an
// engine only inputs it can read and staging locations it can write:
// anything else it downloads, pipes or extracts into a local file first.
type Caps struct {
	// Read are the URL schemes of input locations the engine reads
	// itself; "file" stands for local paths and file:// URLs.
	Read []string
	// Write are the URL schemes of sink and rejects locations the engine
	// writes itself ("file" as in Read).
	Write []string
	// Pipes says the engine reads a Source with Stream set: named pipes
	// another goroutine fills while Execute runs.
	Pipes bool
	// Growing, when set, is the name prefix of a file the engine writes
	// into a sink's local folder front to back while Execute runs (and
	// never rewrites), when it writes the sink as one file: a sink may send
	// its bytes on while they are written, and check them once Execute
	// returned. "" when the engine promises nothing of the kind.
	Growing string
	// SchemaEvolution says the engine reads Source.SchemaEvolution's
	// modes other than fail; a source that asks for one is refused with
	// an engine that does not.
	SchemaEvolution bool
}

// Reads reports whether the engine reads locations of scheme itself.
func (c Caps) Reads(scheme string) bool { return slices.Contains(c.Read, scheme) }

// Writes reports whether the engine writes locations of scheme itself.
func (c Caps) Writes(scheme string) bool { return slices.Contains(c.Write, scheme) }

// Progress is how far the statement an engine runs has come.
type Progress struct {
	Percent   float64 // 0-100 of the statement's estimated work
	Rows      int64   // rows the statement has processed
	TotalRows int64   // rows it is estimated to process (0: unknown)
}

// Progresser is an Engine that reports the progress of the Execute in
// progress. Progress may be called from any goroutine at any time (it
// reports false when nothing runs or it cannot tell); Env.Progress must be
// set for it to know anything.
type Progresser interface {
	Progress() (Progress, bool)
}
