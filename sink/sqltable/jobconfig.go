package sqltable

import (
	"strings"

	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/job"
)

// Modes are the modes of SQL table sinks.
var Modes = []string{"append", "merge", "overwrite"}

// JobConfig is a SQL table sink's block in the job file (a sink with
// connection:): read a job's with k.Config.(*sqltable.JobConfig), and open
// the sink with its Runtime. A sink's ctx and from: are job.Sink's.
type JobConfig struct {
	// Connection, PasswordEnv and Table as for SQL table sources.
	Connection  string `yaml:"connection" doc:"required: postgres://user@host:port/db | mysql://...; no password"`
	PasswordEnv string `yaml:"password_env" doc:"the environment variable that holds the password, never inline"`
	Table       string `yaml:"table" doc:"required: schema.table or table; created from the output schema when missing"`
	// Mode is append (default), merge or overwrite.
	Mode string `yaml:"mode" doc:"append | merge (upsert on merge_keys) | overwrite"`
	// MergeKeys are the upsert keys of mode merge.
	MergeKeys []string `yaml:"merge_keys" doc:"the columns mode merge upserts on"`
}

// ApplyDefaults fills the unset keys.
func (c *JobConfig) ApplyDefaults(*job.Spec) {
	if c.Mode == "" {
		c.Mode = "append"
	}
}

// Validate checks the block, every problem at its key, without connecting.
func (c *JobConfig) Validate(ck *job.Check) {
	ck.Connection(c.Connection, sqldb.Schemes)
	if c.Table == "" {
		ck.Fail("table", "is required with connection:")
	}
	ck.OneOf("mode", c.Mode, Modes)
	if c.Mode == "merge" && len(c.MergeKeys) == 0 {
		ck.Fail("merge_keys", "mode merge needs merge_keys")
	}
}

// Runtime is the sink's SinkConfig, named ctx.
func (c *JobConfig) Runtime(ctx string) SinkConfig {
	return SinkConfig{Ctx: ctx, Connection: c.Connection, PasswordEnv: c.PasswordEnv, Table: c.Table, Mode: c.Mode, MergeKeys: c.MergeKeys}
}

// PasswordVar is the variable holding the password (job.PasswordVarer).
func (c *JobConfig) PasswordVar() string { return c.PasswordEnv }

// Place is where the sink reads and writes: its table, named for lineage
// (job.Placer); a table has no folder.
func (c *JobConfig) Place(spec *job.Spec) job.Place {
	_, shown := secret.Find(strings.TrimSpace(c.Connection + " " + c.Table))
	p := job.Place{Shown: shown}
	if ns, name, uri, ok := sqldb.Dataset(spec.Dir, c.Connection, c.Table); ok {
		p.Dataset = job.Dataset{Namespace: ns, Name: name, SourceName: ns, URI: uri}
	}
	return p
}
