// Package job defines the job file: its envelope (job, state, bookmark,
// engine, on_bad_record, sources, transforms, sinks, io), defaults and
// validation. Each source, sink and engine kind owns its block: a Config
// registered from the component's package (RegisterSource, RegisterSink,
// RegisterEngine), which decodes, defaults and validates it. Every error
// names the key and its line in the file.
package job

import (
	"time"

	"github.com/goccy/go-yaml"
)

// Spec is one parsed and validated job file.
type Spec struct {
	// Job is the job's name; bookmarks and runs are kept under it.
	Job string `yaml:"job" doc:"required; bookmarks and runs are kept under this name"`
	// State is the state store location: a SQLite path (default
	// .tidemark/state.db next to the job file), postgres://... or s3://...
	State string `yaml:"state" doc:"state store: a SQLite path (relative to the job file; default .tidemark/state.db beside it), postgres://... or s3://..."`
	// Bookmark is the default bookmark mode: enable, disable or pause.
	Bookmark string `yaml:"bookmark" doc:"default bookmark mode: enable | disable | pause; --job-bookmark-option overrides it"`
	// Engine selects the engine: duckdb (default), with its options under
	// its name.
	Engine Engine `yaml:"engine" doc:"the engine: NAME, or {NAME: {options}} (see Engines below)"`
	// OnBadRecord is the default for every source: fail, skip or quarantine.
	OnBadRecord string `yaml:"on_bad_record" doc:"fail | skip | quarantine: the default for every file source"`
	// Sources are the inputs, each with its own bookmark under its ctx.
	Sources []Source `yaml:"sources" doc:"required: the inputs, each a file source or a SQL table (see Sources below)"`
	// Transforms are named SQL views, defined in order.
	Transforms yaml.MapSlice `yaml:"transforms" doc:"optional: named SQL views over sources and earlier transforms, in order"`
	// Sinks are the outputs.
	Sinks []Sink `yaml:"sinks" doc:"required: the outputs, each a file sink or a SQL table (see Sinks below)"`
	// IO bounds downloads and uploads of remote (S3) inputs and outputs.
	IO IO `yaml:"io" doc:"bounds on the transfers of remote (S3) inputs and outputs"`
	// Crawler is a crawler run before the sources are planned.
	Crawler *Crawler `yaml:"crawler" doc:"optional: a crawler file's path (relative to the job file) or a crawler block inline, crawled into the job's state before its sources are planned (see Crawling)"`
	// BatchFiles, when positive, makes a run with more new files than this
	// read, commit and publish them in batches of this many files of each
	// source, each batch its own run record and bookmark version (see
	// batch.go in the root package); 0 reads a run in one batch. Default DefaultBatchFiles
	// for a job with one source and append sinks; unset for several sources.
	BatchFiles *int `yaml:"batch_files" doc:"a run with more new files than this reads, commits and publishes them in batches of this many, each batch its own run and bookmark version (a crash late in a backfill keeps the batches done); 0: one batch. Default for a job with one source; with several (a join would see only each batch's files) unset: one batch"`
	// Lineage sends OpenLineage run events (START, COMPLETE, FAIL).
	Lineage Lineage `yaml:"lineage" doc:"OpenLineage run events for every run; default: OPENLINEAGE_URL and OPENLINEAGE_API_KEY"`

	// Dir is the folder of the job file; relative paths resolve against it.
	Dir string `yaml:"-"`
	// File is the job file's path, for messages.
	File string `yaml:"-"`
	// lines maps YAML paths to line numbers for validation messages.
	lines func(path string) int `yaml:"-"`
}

// Engine is the job's engine: `engine: NAME` or `engine: {NAME: {...}}`.
type Engine struct {
	// Name is the engine kind ("duckdb").
	Name string
	// Line is the line of the engine: key (0: not in the file).
	Line int
	// Config is the engine kind's block (the component's *Config, e.g.
	// *duckdb.Config); nil for an engine not built into this binary, which
	// Validate refuses.
	Config Config
	// raw is the block of an engine not built in, kept for the secret
	// check.
	raw map[string]any
}

// Source is one source: the keys every kind has, and the kind's block.
type Source struct {
	// Ctx is the source's stable id (Glue's transformation_ctx); also its
	// view name in transforms.
	Ctx string `yaml:"ctx" doc:"Glue's transformation_ctx: the stable id of this source's bookmark; also its SQL view name"`
	// Kind is the source kind ("files", "sqltable"), told by the block's
	// keys (connection: means a SQL table).
	Kind string `yaml:"-"`
	// Line is the line where the block starts (0: not from a file).
	Line int `yaml:"-"`
	// Config is the kind's block: the component's *Config, e.g.
	// src.Config.(*files.Config) from source/files.
	Config Config `yaml:"-"`
}

// Sink is one output: the keys every kind has, and the kind's block.
type Sink struct {
	Ctx string `yaml:"ctx" doc:"the sink's id in run summaries and its output records"`
	// From is a transform or source ctx; default: the last transform, else
	// the only source.
	From string `yaml:"from" doc:"a transform or a source ctx; default: the last transform, else the only source"`
	// Kind is the sink kind ("files", "sqltable"), told as for sources.
	Kind string `yaml:"-"`
	// Line is the line where the block starts (0: not from a file).
	Line int `yaml:"-"`
	// Config is the kind's block: the component's *Config, e.g.
	// k.Config.(*files.Config) from sink/files.
	Config Config `yaml:"-"`
}

// IO bounds the transfers of remote inputs and outputs.
type IO struct {
	// Concurrency is how many objects move at once (default 8).
	Concurrency int `yaml:"concurrency" doc:"how many objects move at once"`
	// DiskBudget caps the bytes of remote inputs held in the spill folder
	// at once (default 10GiB); a single larger file is still read.
	DiskBudget Size `yaml:"disk_budget" doc:"the bytes of remote inputs held in the spill folder at once; a single larger file is still read"`
}

// Lineage is where OpenLineage run events go.
type Lineage struct {
	// URL is the endpoint's base URL; events are POSTed to URL/api/v1/lineage
	// (a URL whose path is set is used as it is).
	URL string `yaml:"url" doc:"the OpenLineage endpoint (http(s)://host:port, events POSTed to /api/v1/lineage, or a full path); default: OPENLINEAGE_URL"`
	// APIKeyEnv names the environment variable holding the API key, sent
	// as a bearer token.
	APIKeyEnv string `yaml:"api_key_env" doc:"the environment variable holding the endpoint's API key (a bearer token), never inline; default: OPENLINEAGE_API_KEY"`
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
