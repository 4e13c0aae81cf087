package job_test

import "github.com/tidemark-etl/tidemark/job"

// The job package's tests run without an engine's option checks, as a
// program that links no engine: a stub engine kind named duckdb.
func init() {
	job.RegisterEngine(job.Kind{Name: "duckdb", New: func() job.Config { return new(stubEngine) }})
}

type stubEngine struct {
	Threads int `yaml:"threads"`
}

func (*stubEngine) ApplyDefaults(*job.Spec) {}

func (e *stubEngine) Validate(c *job.Check) { c.Positive("threads", int64(e.Threads)) }
