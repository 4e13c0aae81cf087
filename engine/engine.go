// Package engine defines what an execution engine does for tidemark: given
// planned input files, it exposes each source as a view, defines the job's
// transforms as views, and writes each sink's rows into a staging folder. An
// engine never touches bookmark state. Implementations: engine/duckdb
// (embedded, default) and later engine/spark (Spark Connect).
package engine

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// Input is one planned input file of a source.
type Input struct {
	Path string // local file path the engine reads
	Key  string // key relative to the source root (for messages and hive columns)
	Size int64
}

// Source is one source of a plan.
type Source struct {
	Ctx     string // view name
	Format  string // csv | json | parquet
	Options map[string]any
	Files   []Input
	// Schema to apply; nil means infer it from Files (first run). The result
	// reports the schema used.
	Schema []bookmark.Column
	// Hive reports whether key=value folders in Key become columns.
	Hive bool
	// Stream says Files are named pipes that another goroutine fills while
	// the engine runs: the engine opens each once and reads it in one
	// pass, whoever reads the source. Only for engines that are Streamers.
	Stream bool
	// Exact says Files hold values that tidemark itself wrote in Schema's
	// types (a SQL table's extract, mapped from the database's types): they
	// convert without loss, so the engine need not check each value.
	Exact bool
}

// Streamer is an Engine that can read a Source with Stream set.
type Streamer interface {
	Streams() bool
}

// Transform is a named SQL view over sources and earlier transforms.
type Transform struct {
	Name string
	SQL  string
}

// Sink writes the rows of From into Dir.
type Sink struct {
	Ctx         string
	From        string
	Format      string // parquet | csv | json
	Options     map[string]any
	PartitionBy []string
	Dir         string // local staging folder, created by the engine, empty before
}

// BadRecords policies.
const (
	BadFail       = "fail"
	BadSkip       = "skip"
	BadQuarantine = "quarantine"
)

// Plan is one execution.
type Plan struct {
	Sources    []Source
	Transforms []Transform
	Sinks      []Sink
	// OnBadRecord is fail, skip or quarantine; with quarantine the rejected
	// rows of source S are written under RejectsDir/S.
	OnBadRecord string
	RejectsDir  string
}

// SourceResult reports one source.
type SourceResult struct {
	Rows     int64
	Rejected int64 // rows skipped or quarantined
	Schema   []bookmark.Column
}

// StagedFile is one file an engine wrote into a sink's Dir.
type StagedFile struct {
	Path  string // relative to Sink.Dir, '/'-separated (may include key=value/)
	Rows  int64
	Bytes int64
}

// SinkResult reports one sink.
type SinkResult struct {
	Files []StagedFile
	Rows  int64
}

// Result is what Execute reports.
type Result struct {
	Sources map[string]SourceResult
	Sinks   map[string]SinkResult
}

// Engine executes plans. An Engine is used by one run at a time.
type Engine interface {
	// Execute runs p. On error nothing it wrote may be published; the caller
	// deletes the sinks' Dirs. Errors about input are *InputError when the
	// engine can tell the file (and line).
	Execute(ctx context.Context, p Plan) (Result, error)
	Close() error
}

// InputError is bad input the engine found: it names file and line.
type InputError struct {
	Source string
	File   string // key or path
	Line   int64  // 0 when unknown
	Column string // may be empty
	Msg    string
}

func (e *InputError) Error() string {
	s := fmt.Sprintf("source %s: %s", e.Source, e.File)
	if e.Line > 0 {
		s += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Column != "" {
		s += fmt.Sprintf(" column %s", e.Column)
	}
	return s + ": " + e.Msg
}

// Options are engine settings from the job file.
type Options struct {
	MemoryLimit string // e.g. "512MB"
	Threads     int
	SpillDir    string
	// Remote is a Spark Connect address (sc://host:port).
	Remote string
	// Progress asks a Progresser engine to track the progress of its
	// statements (it may cost a little time).
	Progress bool
}

// Progress is how far the statement an engine runs has come.
type Progress struct {
	Percent   float64 // 0-100 of the statement's estimated work
	Rows      int64   // rows the statement has processed
	TotalRows int64   // rows it is estimated to process (0: unknown)
}

// Progresser is an Engine that reports the progress of the Execute in
// progress. Progress may be called from any goroutine at any time (it
// reports false when nothing runs or it cannot tell); Options.Progress
// must be set for it to know anything.
type Progresser interface {
	Progress() (Progress, bool)
}

// Factory makes an engine from the job's engine options.
type Factory func(opts Options) (Engine, error)

var factories = map[string]Factory{}

// Register makes an engine available by name ("duckdb", "spark"); called
// from the implementation's init.
func Register(name string, f Factory) { factories[name] = f }

// New makes the named engine.
func New(name string, opts Options) (Engine, error) {
	f, ok := factories[name]
	if !ok {
		return nil, fmt.Errorf("engine %q is not built into this binary", name)
	}
	return f(opts)
}

// OptionChecker checks a job's reader and writer options before a run, so
// a bad option is a job-file error (exit 2) rather than a failed run.
type OptionChecker struct {
	Source func(format string, opts map[string]any) error
	Sink   func(format string, opts map[string]any) error
}

var checkers = map[string]OptionChecker{}

// RegisterOptions registers the named engine's option checks.
func RegisterOptions(name string, c OptionChecker) { checkers[name] = c }

// CheckOptions returns the named engine's option checks (zero if none).
func CheckOptions(name string) OptionChecker { return checkers[name] }
