package sqltable

import (
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/job"
)

// JobConfig is a SQL table source's block in the job file (a source with
// connection:): read a job's with src.Config.(*sqltable.JobConfig), and
// open the source with its Runtime.
type JobConfig struct {
	// Connection is postgres://..., mysql://... or sqlite:PATH, without a password.
	Connection string `yaml:"connection" doc:"required: postgres://user@host:port/db | mysql://... | sqlite:PATH (relative to the job file); no password"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env" doc:"the environment variable that holds the password, never inline"`
	// Table or Query (a subquery the keys apply to) is what is read.
	Table string `yaml:"table" doc:"schema.table or table; or query:"`
	Query string `yaml:"query" doc:"a SELECT the keys apply to (as a subquery), instead of table:"`
	// BookmarkKeys are compared as a tuple; default: the primary key.
	BookmarkKeys []string `yaml:"bookmark_keys" doc:"compared as a tuple; default: the primary key"`
	// BookmarkKeysSortOrder is asc (default) or desc.
	BookmarkKeysSortOrder string `yaml:"bookmark_keys_sort_order" doc:"asc | desc (keys shrink: a run reads keys below the mark)"`
	// Lookback re-reads this far behind the mark: a key distance or, for
	// time keys, a duration; rows already delivered are dropped.
	Lookback string `yaml:"lookback" doc:"re-read this far behind the mark: a duration (10m, 3d) for time keys, a number for numeric keys"`
	// BoundedRows limits the rows of one run.
	BoundedRows int64 `yaml:"bounded_rows" doc:"per-run limit, in key order; 0: none"`
	// OnNullKey is fail (default) or skip.
	OnNullKey string `yaml:"on_null_key" doc:"fail | skip: what rows with a NULL key do (skip: left out and counted as null_keys)"`
	// RegressionCheck counts rows that appear behind the mark each run
	// (default true).
	RegressionCheck *bool `yaml:"regression_check" doc:"count rows that appear behind the mark"`
	// RegressionCheckRows is how many rows behind the window the check
	// covers (default 100,000; 0: every row, each run).
	RegressionCheckRows *int64 `yaml:"regression_check_rows" doc:"how far back the regression check counts; 0: every row behind the window"`
	// Changes is "log": the table's inserts, updates and deletes are read
	// from PostgreSQL's logical replication instead of by bookmark keys
	// (logsource.go); "detect": they are found by comparing the table's
	// keys and row checksums with what was delivered (detectsource.go).
	Changes string `yaml:"changes" doc:"log: read the table's inserts, updates and deletes by PostgreSQL logical replication (rows carry _op, _lsn, _seq, _commit_time); detect: find them by comparing the table's keys and row checksums, range by range, with what earlier runs delivered (rows carry _op); unset: rows by bookmark keys"`
	// Slot and Publication name the replication slot and publication of
	// changes: log (default: derived from the job and the ctx).
	Slot        string `yaml:"slot" doc:"changes: log: the replication slot (default tidemark_<job>_<ctx>_<hash>), created when missing"`
	Publication string `yaml:"publication" doc:"changes: log: the publication (default: the slot's name), created FOR TABLE when missing"`
}

// ApplyDefaults fills the unset keys that have a default of their own.
func (c *JobConfig) ApplyDefaults(*job.Spec) {
	if c.BookmarkKeysSortOrder == "" {
		c.BookmarkKeysSortOrder = "asc"
	}
	if c.OnNullKey == "" {
		c.OnNullKey = "fail"
	}
	if c.RegressionCheck == nil {
		t := true
		c.RegressionCheck = &t
	}
	if c.RegressionCheckRows == nil {
		n := int64(DefaultRegressionRows)
		c.RegressionCheckRows = &n
	}
}

// Validate checks the block, every problem at its key, without connecting.
func (c *JobConfig) Validate(ck *job.Check) {
	if (c.Table == "") == (c.Query == "") {
		ck.Fail("table", "give exactly one of table: or query:")
	}
	ck.Connection(c.Connection, sqldb.Schemes)
	ck.OneOf("bookmark_keys_sort_order", c.BookmarkKeysSortOrder, []string{"asc", "desc"})
	ck.OneOf("on_null_key", c.OnNullKey, []string{"fail", "skip"})
	ck.Positive("bounded_rows", c.BoundedRows)
	if c.RegressionCheckRows != nil && *c.RegressionCheckRows < 0 {
		ck.Fail("regression_check_rows", "must be 0 (every row) or more")
	}
	c.validateLog(ck)
}

// Runtime is the source's Config, named ctx, with a relative SQLite path
// resolved against dir (the job file's folder).
func (c *JobConfig) Runtime(ctx, dir string) Config {
	conn := c.Connection
	if p, ok := strings.CutPrefix(conn, "sqlite:"); ok && !strings.HasPrefix(p, "//") && !filepath.IsAbs(p) {
		conn = "sqlite:" + filepath.Join(dir, p)
	}
	return Config{Ctx: ctx, Connection: conn, PasswordEnv: c.PasswordEnv, Table: c.Table, Query: c.Query,
		BookmarkKeys: c.BookmarkKeys, SortOrder: c.BookmarkKeysSortOrder, Lookback: c.Lookback,
		BoundedRows: c.BoundedRows, OnNullKey: c.OnNullKey,
		NoRegressionCheck: c.RegressionCheck != nil && !*c.RegressionCheck, RegressionRows: c.regressionRows()}
}

// regressionRows maps regression_check_rows (unset: the default; 0: every
// row) to Config.RegressionRows (0: the default; -1: every row).
func (c *JobConfig) regressionRows() int64 {
	switch {
	case c.RegressionCheckRows == nil:
		return 0
	case *c.RegressionCheckRows == 0:
		return -1
	}
	return *c.RegressionCheckRows
}

// PasswordVar is the variable holding the password (job.PasswordVarer).
func (c *JobConfig) PasswordVar() string { return c.PasswordEnv }

// Place is where the source reads: its table, named for lineage
// (job.Placer); a table has no folder.
func (c *JobConfig) Place(spec *job.Spec) job.Place {
	_, shown := secret.Find(strings.TrimSpace(c.Connection + " " + c.Table))
	p := job.Place{Shown: shown}
	if ns, name, uri, ok := sqldb.Dataset(spec.Dir, c.Connection, c.Table); ok {
		p.Dataset = job.Dataset{Namespace: ns, Name: name, SourceName: ns, URI: uri}
	}
	return p
}
