package duckdb

import (
	"fmt"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
)

// Options are the DuckDB engine's settings, the job file's
// engine: {duckdb: {...}} block. The zero value is the default: DuckDB's
// own memory limit and thread count, a fresh temporary spill folder.
type Options struct {
	MemoryLimit string `yaml:"memory_limit" doc:"DuckDB memory_limit, e.g. 512MB or 4GB; DuckDB's default (80% of RAM) when empty"`
	Threads     int    `yaml:"threads" doc:"DuckDB worker threads; 0 means one per core"`
	SpillDir    string `yaml:"spill_dir" doc:"the folder for DuckDB's spill files and the run's downloaded inputs (relative to the job file); default: the system's temporary folder"`
	// Progress asks the engine to track the progress of its statements
	// (engine.Env.Progress); not a job-file setting.
	Progress bool `yaml:"-"`
}

var _ engine.Options = (*Options)(nil)

// ApplyDefaults resolves a relative spill folder against the job file's
// folder; every other key is left to DuckDB's own default.
func (o *Options) ApplyDefaults(s *job.Spec) {
	if s != nil && s.Dir != "" && o.SpillDir != "" {
		o.SpillDir = s.Resolve(o.SpillDir)
	}
}

// SpillFolder is where the run may keep its temporary files too ("": the
// system's temporary folder).
func (o *Options) SpillFolder() string { return o.SpillDir }

// Validate checks the job file's block, every problem at its key.
func (o *Options) Validate(ck *job.Check) {
	if err := o.Check(); err != nil {
		ck.Fail("", "%v", err)
	}
}

// Check reports the first bad setting, naming its key.
func (o *Options) Check() error {
	if o.Threads < 0 {
		return fmt.Errorf("threads must be positive, got %d", o.Threads)
	}
	if err := checkText("memory_limit", o.MemoryLimit); err != nil {
		return err
	}
	return nil
}
