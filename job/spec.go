// Package job defines the job file: its YAML form, defaults and validation.
// Every error names the key and its line in the file.
package job

import (
	"time"

	"github.com/goccy/go-yaml"
)

// Spec is one parsed and validated job file.
type Spec struct {
	// Job is the job's name; bookmarks and runs are kept under it.
	Job string `yaml:"job"`
	// State is the state store location: a SQLite path (default
	// .tidemark/state.db next to the job file), postgres://... or s3://...
	State string `yaml:"state"`
	// Bookmark is the default bookmark mode: enable, disable or pause.
	Bookmark string `yaml:"bookmark"`
	// Engine selects the engine: duckdb (default) or {spark: {remote: ...}},
	// with engine options under the engine's name.
	Engine Engine `yaml:"engine"`
	// OnBadRecord is the default for every source: fail, skip or quarantine.
	OnBadRecord string `yaml:"on_bad_record"`
	// Sources are the inputs, each with its own bookmark under its ctx.
	Sources []Source `yaml:"sources"`
	// Transforms are named SQL views, defined in order.
	Transforms yaml.MapSlice `yaml:"transforms"`
	// Sinks are the outputs.
	Sinks []Sink `yaml:"sinks"`
	// IO bounds downloads and uploads of remote (S3) inputs and outputs.
	IO IO `yaml:"io"`

	// Dir is the folder of the job file; relative paths resolve against it.
	Dir string `yaml:"-"`
	// File is the job file's path, for messages.
	File string `yaml:"-"`
	// lines maps YAML paths to line numbers for validation messages.
	lines func(path string) int `yaml:"-"`
}

// Engine is the engine: its name and options.
type Engine struct {
	Name string
	// DuckDB options.
	MemoryLimit string `yaml:"memory_limit"`
	Threads     int    `yaml:"threads"`
	SpillDir    string `yaml:"spill_dir"`
	// Spark options.
	Remote string `yaml:"remote"`
}

// Source is one file source.
type Source struct {
	// Ctx is the source's stable id (Glue's transformation_ctx); also its
	// view name in transforms.
	Ctx string `yaml:"ctx"`
	// Path is s3://..., file://... or a local path (relative to the job file).
	Path string `yaml:"path"`
	// Format is csv, json (JSON Lines) or parquet.
	Format string `yaml:"format"`
	// Options pass through to the reader (header, delim, ...).
	Options map[string]any `yaml:"options"`
	// Include and Exclude are globs over keys relative to Path ("**" spans folders).
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
	// Tracking is exact (default) or timestamp.
	Tracking string `yaml:"tracking"`
	// MaxBand is timestamp tracking's band (default 15m).
	MaxBand Duration `yaml:"max_band"`
	// MaxFilesInBand caps the files taken per run within the band (default 1000).
	MaxFilesInBand int `yaml:"max_files_in_band"`
	// BoundedFiles and BoundedSize limit one run's input, oldest first.
	BoundedFiles int  `yaml:"bounded_files"`
	BoundedSize  Size `yaml:"bounded_size"`
	// OnModified is reprocess (default), ignore or fail.
	OnModified string `yaml:"on_modified"`
	// OnBadRecord overrides the job's default.
	OnBadRecord string `yaml:"on_bad_record"`
	// HivePartitioning turns key=value folders into columns (default true).
	HivePartitioning *bool `yaml:"hive_partitioning"`
	// Listing is full (default) or ordered: for prefixes whose keys sort in
	// arrival order, list only after the last key recorded (S3 StartAfter).
	Listing string `yaml:"listing"`
	// S3 overrides the S3 settings for this source: endpoint, region,
	// path_style, profile (and tuning: max_attempts, part_size, ...).
	S3 map[string]string `yaml:"s3"`
	// AllowMissing lets a local source folder not exist yet (a run then
	// reads nothing); without it a missing folder fails the run. On S3 it
	// silences the warning about a prefix that holds no object.
	AllowMissing bool `yaml:"allow_missing"`

	// SQL table sources (instead of Path):
	// Connection is postgres://..., mysql://... or sqlite:PATH, without a password.
	Connection string `yaml:"connection"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env"`
	// Table or Query (a subquery the keys apply to) is what is read.
	Table string `yaml:"table"`
	Query string `yaml:"query"`
	// BookmarkKeys are compared as a tuple; default: the primary key.
	BookmarkKeys []string `yaml:"bookmark_keys"`
	// BookmarkKeysSortOrder is asc (default) or desc.
	BookmarkKeysSortOrder string `yaml:"bookmark_keys_sort_order"`
	// Lookback re-reads this far behind the mark: a key distance or, for
	// time keys, a duration; rows already delivered are dropped.
	Lookback string `yaml:"lookback"`
	// BoundedRows limits the rows of one run.
	BoundedRows int64 `yaml:"bounded_rows"`
	// OnNullKey is fail (default) or skip.
	OnNullKey string `yaml:"on_null_key"`
	// RegressionCheck counts rows that appear behind the mark each run
	// (default true).
	RegressionCheck *bool `yaml:"regression_check"`
	// RegressionCheckRows is how many rows behind the window the check
	// covers (default 100,000; 0: every row, each run).
	RegressionCheckRows *int64 `yaml:"regression_check_rows"`
}

// IsTable reports whether the source reads a SQL table instead of files.
func (s Source) IsTable() bool { return s.Connection != "" }

// Sink is one output.
type Sink struct {
	Ctx string `yaml:"ctx"`
	// From is a transform or source ctx; default: the last transform, else
	// the only source.
	From string `yaml:"from"`
	Path string `yaml:"path"`
	// Format is parquet (default), csv or json.
	Format string `yaml:"format"`
	// Options pass through to the writer (compression, ...).
	Options     map[string]any `yaml:"options"`
	PartitionBy []string       `yaml:"partition_by"`
	// Mode is append (default), overwrite or overwrite_partitions.
	Mode string `yaml:"mode"`
	// S3 overrides the S3 settings for this sink, as for sources.
	S3 map[string]string `yaml:"s3"`

	// SQL table sinks (instead of Path): Connection, PasswordEnv and Table
	// as for sources; Mode is append, merge or overwrite.
	Connection  string `yaml:"connection"`
	PasswordEnv string `yaml:"password_env"`
	Table       string `yaml:"table"`
	// MergeKeys are the upsert keys of mode merge.
	MergeKeys []string `yaml:"merge_keys"`
}

// IsTable reports whether the sink writes a SQL table instead of files.
func (k Sink) IsTable() bool { return k.Connection != "" }

// IO bounds the transfers of remote inputs and outputs.
type IO struct {
	// Concurrency is how many objects move at once (default 8).
	Concurrency int `yaml:"concurrency"`
	// DiskBudget caps the bytes of remote inputs held in the spill folder
	// at once (default 10GiB); a single larger file is still read.
	DiskBudget Size `yaml:"disk_budget"`
}

// Duration is a time.Duration written as "15m" in YAML.
type Duration struct {
	time.Duration
	err error // reported by Validate, which knows the line
	set bool  // written in the job file (not a default)
}

// Size is a byte count written as "10GiB" in YAML.
type Size struct {
	Bytes int64
	err   error
}
