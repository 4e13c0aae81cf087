package tidemark

import (
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/job"
	sinkfiles "github.com/tidemark-etl/tidemark/sink/files"
	sinksql "github.com/tidemark-etl/tidemark/sink/sqltable"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// The components own their job-file blocks; importing them here registers
// each kind with the job package. These read a job's blocks.

// fileConfig is a file source's block.
func fileConfig(src job.Source) *srcfiles.Config { return src.Config.(*srcfiles.Config) }

// tableSourceConfig is a SQL table source's block.
func tableSourceConfig(src job.Source) *sqltable.JobConfig { return src.Config.(*sqltable.JobConfig) }

// fileSinkConfig is a file sink's block.
func fileSinkConfig(k job.Sink) *sinkfiles.Config { return k.Config.(*sinkfiles.Config) }

// tableSinkConfig is a SQL table sink's configuration.
func tableSinkConfig(k job.Sink) sinksql.SinkConfig {
	return k.Config.(*sinksql.JobConfig).Runtime(k.Ctx)
}

// engineConfig is the DuckDB engine's block (empty for another engine).
func engineConfig(spec *job.Spec) *duckdb.Config {
	if c, ok := spec.Engine.Config.(*duckdb.Config); ok {
		return c
	}
	return &duckdb.Config{}
}
