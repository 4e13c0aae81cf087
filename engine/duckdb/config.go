package duckdb

import "github.com/tidemark-etl/tidemark/job"

func init() {
	job.RegisterEngine(job.Kind{Name: "duckdb", Noun: "the DuckDB engine", New: func() job.Config { return new(Config) }})
}

// Config is the DuckDB engine's block in the job file (`engine: {duckdb:
// {...}}`): read a job's with spec.Engine.Config.(*duckdb.Config).
type Config struct {
	MemoryLimit string `yaml:"memory_limit" doc:"DuckDB's memory_limit (e.g. 512MB); default: DuckDB's (80% of RAM)"`
	Threads     int    `yaml:"threads" doc:"DuckDB's threads; 0: one per core"`
	SpillDir    string `yaml:"spill_dir" doc:"the folder for DuckDB's spill files and downloaded inputs (relative to the job file); default: the system's temporary folder"`
}

// ApplyDefaults leaves every key to DuckDB's own default.
func (c *Config) ApplyDefaults(*job.Spec) {}

// Validate checks the block, every problem at its key.
func (c *Config) Validate(ck *job.Check) {
	if c.Threads < 0 {
		ck.Fail("", "threads must be positive")
	}
}
