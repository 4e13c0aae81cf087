// Package sqltable writes a job's output into a PostgreSQL or MySQL/MariaDB
// table, exactly once.
//
// The protocol, in the runner's order:
//
//  1. Stage (before the run's state commit) loads the engine's output for
//     this sink — Parquet files — into a staging table
//     _tidemark_stage_<run>_<hash> in the target's schema, in bulk
//     (PostgreSQL COPY FROM STDIN, MySQL LOAD DATA LOCAL INFILE), creating
//     the target table from the output schema when it is missing.
//  2. Publish (after the commit; again on every roll-forward) moves the
//     staged rows into the target and writes the run's marker row in
//     _tidemark_runs in one database transaction. A marker that exists
//     means the run was published: Publish then does nothing but drop the
//     stage. So a crash anywhere never loads a run twice.
//  3. Purge (reset --purge-output) deletes what a run loaded, through the
//     _tidemark_run_id column of tables tidemark created.
//  4. Cleanup drops the staging tables of runs that never committed.
//
// Modes: append inserts; overwrite deletes every row of the target, then
// inserts (in the same transaction); merge upserts on merge_keys (INSERT
// ... ON CONFLICT DO UPDATE / ON DUPLICATE KEY UPDATE) and needs a unique
// index on exactly those columns, which tidemark creates with the table.
// When a run carries several rows with one merge key, the last one in the
// engine's output wins.
//
// What Purge can undo: append — every row the run inserted; merge — the
// rows whose current version the run wrote (inserted or updated): they are
// deleted, and the versions the run replaced are not restored (rows a
// later run wrote again belong to that run); overwrite — the rows the run
// wrote; the table's earlier content is gone. A target table tidemark did
// not create has no _tidemark_run_id column unless its owner adds one
// (_tidemark_run_id varchar(64)); without it Purge refuses (ErrNoRunColumn).
package sqltable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// SinkConfig is one SQL table sink; its fields mirror the job file's keys.
type SinkConfig struct {
	Ctx         string
	Connection  string // postgres://... or mysql://..., no password
	PasswordEnv string
	Table       string // schema.table or table
	Mode        string // append (default), merge or overwrite
	MergeKeys   []string
}

// Validate checks the configuration without connecting.
func (c SinkConfig) Validate() error {
	if c.Connection == "" {
		return errors.New("connection: required")
	}
	if c.Table == "" {
		return errors.New("table: required")
	}
	switch c.Mode {
	case "", "append", "overwrite":
		if len(c.MergeKeys) > 0 {
			return fmt.Errorf("merge_keys: only with mode merge (mode is %s)", c.mode())
		}
	case "merge":
		if len(c.MergeKeys) == 0 {
			return errors.New("merge_keys: mode merge needs the columns to upsert on")
		}
	default:
		return fmt.Errorf("mode: %q is not append, merge or overwrite", c.Mode)
	}
	if _, err := sqldb.ParseName(c.Table); err != nil {
		return err
	}
	k, err := sqldb.KindOf(c.Connection)
	if err != nil {
		return err
	}
	if k == sqldb.SQLite {
		return errors.New("connection: SQL table sinks write PostgreSQL or MySQL/MariaDB, not SQLite")
	}
	return nil
}

func (c SinkConfig) mode() string {
	if c.Mode == "" {
		return "append"
	}
	return c.Mode
}

// RunColumn is the column of tables tidemark creates that records which
// run wrote each row.
const RunColumn = "_tidemark_run_id"

// Meta tables, in the target's schema.
const (
	runsTable   = "_tidemark_runs"
	stagesTable = "_tidemark_stages"
	stagePrefix = "_tidemark_stage_"
)

// ErrNoRunColumn is returned by Purge for a table without RunColumn.
var ErrNoRunColumn = errors.New("the table has no " + RunColumn + " column, so the rows of one run cannot be told apart")

// Sink is an opened SQL table sink.
type Sink struct {
	cfg    SinkConfig
	db     *sqldb.DB
	k      sqldb.Kind
	target sqldb.Name
}

// Open validates cfg and connects. It creates nothing yet.
func Open(ctx context.Context, cfg SinkConfig) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("sink %s: %w", cfg.Ctx, err)
	}
	db, err := sqldb.Open(ctx, cfg.Connection, cfg.PasswordEnv, sqldb.Options{AppName: "tidemark " + cfg.Ctx})
	if err != nil {
		return nil, fmt.Errorf("sink %s: %w", cfg.Ctx, err)
	}
	n, _ := sqldb.ParseName(cfg.Table)
	return &Sink{cfg: cfg, db: db, k: db.Kind, target: n}, nil
}

// Close closes the sink's connections.
func (k *Sink) Close() error { return k.db.Close() }

// fail wraps err with the sink, table and operation, redacted.
func (k *Sink) fail(op string, err error) error {
	return k.db.Redact(fmt.Errorf("sink %s: table %s: %s: %w", k.cfg.Ctx, k.target, op, err))
}

func (k *Sink) q(ident string) string    { return k.k.Quote(ident) }
func (k *Sink) qn(n sqldb.Name) string   { return k.k.Quoted(n) }
func (k *Sink) meta(t string) sqldb.Name { return k.target.Sibling(t) }
func (k *Sink) ph(i int) string {
	return map[bool]string{true: fmt.Sprintf("$%d", i), false: "?"}[k.k == sqldb.Postgres]
}
func (k *Sink) lit(s string) string        { return k.k.Literal(s) }
func (k *Sink) targetSQL() string          { return k.qn(k.target) }
func (k *Sink) stageSQL(run string) string { return k.qn(k.meta(k.stageName(run))) }

var unsafeIdent = regexp.MustCompile(`[^a-z0-9]+`)

// stageName is the staging table of a run for this sink: lower case (MySQL
// on some systems folds table names), the run id made safe, and a hash of
// the sink and target so that two sinks of one run never collide.
func (k *Sink) stageName(run string) string {
	h := sha256.Sum256([]byte(k.cfg.Ctx + "\x00" + k.target.String()))
	safe := unsafeIdent.ReplaceAllString(strings.ToLower(run), "_")
	if len(safe) > 32 {
		safe = safe[:32]
	}
	return stagePrefix + safe + "_" + hex.EncodeToString(h[:4])
}
