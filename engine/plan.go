package engine

import "github.com/tidemark-etl/tidemark/bookmark"

// Input is one planned input of a source.
type Input struct {
	// Location is where the engine reads the input: a local path or a
	// file:// URL, a named pipe (Source.Stream), or a URL of a scheme the
	// engine reads itself (Caps.Read, e.g. s3://bucket/key). The runner
	// hands an engine only locations its Caps name.
	Location string
	Key      string // key relative to the source root (for messages and hive columns)
	Size     int64
}

// Source is one source of a plan.
type Source struct {
	Ctx     string // view name
	Format  string // csv | json | parquet
	Options map[string]any
	Files   []Input
	// Schema to apply; nil means infer it from Files (first run). Types are
	// texts of bookmark.Type (older states: DuckDB spellings, which
	// bookmark.ParseType reads). The result reports the schema used, in
	// canonical bookmark.Type texts.
	Schema []bookmark.Column
	// Hive reports whether key=value folders in Key become columns.
	Hive bool
	// Stream says Files are named pipes that another goroutine fills while
	// the engine runs: the engine opens each once and reads it in one
	// pass, whoever reads the source. Only for engines whose Caps have
	// Pipes.
	Stream bool
	// Exact says Files hold values that tidemark itself wrote in Schema's
	// types (a SQL table's extract, mapped from the database's types): they
	// convert without loss, so the engine need not check each value.
	Exact bool
	// SchemaEvolution is what a file whose columns or values differ from
	// Schema does (bookmark.Evolve*): "" or fail, as before it existed (a
	// CSV header with a column the schema lacks, or lacking one, or a
	// Parquet file of other columns or types, is an *InputError naming
	// file and column); add_new_columns reads new columns and values that
	// need a wider type (bookmark.Widens, bookmark.Wider) and reports the
	// grown schema, giving NULL where a file lacks a column; rescue keeps
	// Schema and adds the column RescuedColumn: a JSON object of column →
	// original text for every column not in Schema and every value that
	// does not fit its column's type (which is then NULL), with the file's
	// Key under RescuedFileKey, NULL when the row has nothing to rescue;
	// none keeps Schema, ignores new columns and gives NULL for missing
	// ones. Except under fail, a file never fails for lacking a column; a
	// type change that is not a widening fails naming file and column.
	// With no Schema (a first run) the inferred schema plays its part.
	SchemaEvolution string
}

// Names schema evolution's rescue adds.
const (
	// RescuedColumn is the VARCHAR column of rescued values (JSON).
	RescuedColumn = "_rescued_data"
	// RescuedFileKey is the key of the file's name in a rescued object.
	RescuedFileKey = "_file"
)

// Transform is a named SQL view over sources and earlier transforms.
type Transform struct {
	Name string
	SQL  string
}

// Sink writes the rows of From under Location.
type Sink struct {
	Ctx         string
	From        string
	Format      string // parquet | csv | json
	Options     map[string]any
	PartitionBy []string
	// Ordered says the sink applies the rows in the order written, the
	// last row of a key winning (a merge): the engine writes them in the
	// order it read them (the sources' files in the plan's order, each
	// file's rows in file order, through transforms that keep it), files
	// named in that order.
	Ordered bool
	// Location is the sink's staging location: a local folder (path or
	// file:// URL) or a URL of a scheme the engine writes itself
	// (Caps.Write). Nothing exists there before Execute; the engine
	// creates it.
	Location string
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
	// rows of source S are written under Rejects/S (a location like
	// Sink.Location).
	OnBadRecord string
	Rejects     string
}

// SourceResult reports one source.
type SourceResult struct {
	Rows     int64
	Rejected int64 // rows skipped or quarantined
	// Schema is the schema the source was read with, in canonical
	// bookmark.Type texts: with add_new_columns the grown schema (new
	// columns after the old ones, widened types in place); never
	// RescuedColumn.
	Schema []bookmark.Column
}

// StagedFile is one file an engine wrote under a sink's Location.
type StagedFile struct {
	Path  string // relative to Sink.Location, '/'-separated (may include key=value/)
	Rows  int64
	Bytes int64
}

// SinkResult reports one sink.
type SinkResult struct {
	Files []StagedFile
	Rows  int64
	// Schema is the columns of the rows written, partition columns
	// included, in canonical bookmark.Type texts (nil: the engine does not
	// tell). A sink that registers its table in the catalog takes its
	// columns from it.
	Schema []bookmark.Column
}

// Result is what Execute reports.
type Result struct {
	Sources map[string]SourceResult
	Sinks   map[string]SinkResult
}
