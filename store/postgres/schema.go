package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrSchemaTooNew is returned for a state schema whose version is newer
// than this binary knows: it was written by a newer tidemark.
var ErrSchemaTooNew = errors.New("state schema is newer than this tidemark supports")

func tooNew(v int) error {
	return fmt.Errorf("%w: the schema has version %d, this tidemark knows up to %d; upgrade tidemark", ErrSchemaTooNew, v, len(migrations))
}

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1, each recorded in schema_migrations. Append only: never
// edit a released migration.
//
// Every text column that is ordered or compared is COLLATE "C": byte order
// of UTF-8, which is Go's string order, whatever the database's locale.
var migrations = []string{
	// 1: the initial schema.
	`
CREATE TABLE store_identity (
	id         text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO store_identity (id) VALUES (replace(gen_random_uuid()::text, '-', ''));

-- leases has one row per job that ever took its lease, kept when the lease
-- is released (held false), so that token (the last fencing token given)
-- grows across release and re-acquire. Every write of a job locks this row
-- first: the job's writes are serialised on it, and only on it.
CREATE TABLE leases (
	job       text COLLATE "C" PRIMARY KEY,
	token     bigint NOT NULL,
	held      boolean NOT NULL,
	holder_id text NOT NULL DEFAULT '',
	host      text NOT NULL DEFAULT '',
	pid       integer NOT NULL DEFAULT 0,
	started   timestamptz,
	expires   timestamptz  -- on the database's clock
);

CREATE TABLE runs (
	job         text COLLATE "C" NOT NULL,
	run_id      text COLLATE "C" NOT NULL,
	seq         bigint NOT NULL,
	attempt     integer NOT NULL,
	mode        text NOT NULL,
	status      text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
	started_at  bigint NOT NULL,  -- Unix ns, as the run recorded it (nanoseconds: a copy from SQLite is exact)
	finished_at bigint,           -- Unix ns; NULL while running
	version     bigint NOT NULL DEFAULT 0,
	undone      boolean NOT NULL DEFAULT false,
	purged      boolean NOT NULL DEFAULT false,
	summary     json NOT NULL DEFAULT '{}',  -- {"sources":{..},"sinks":{..}}
	error       text NOT NULL DEFAULT '',
	job_file    text NOT NULL DEFAULT '',
	host        text NOT NULL DEFAULT '',
	PRIMARY KEY (job, run_id),
	UNIQUE (job, seq)  -- Runs paging, the next seq, attempts since the last success
);
-- Unpublished and Reset read a job's succeeded runs by seq.
CREATE INDEX runs_succeeded ON runs (job, seq) WHERE status = 'succeeded';

-- bookmark_versions keeps every version; a job's head is its greatest.
-- run_id is the committing run (kind commit) or the rewind target (kind
-- reset, '' for a full reset).
CREATE TABLE bookmark_versions (
	job          text COLLATE "C" NOT NULL,
	version      bigint NOT NULL,
	run_id       text COLLATE "C" NOT NULL,
	kind         text NOT NULL CHECK (kind IN ('commit', 'reset')),
	created_at   bigint NOT NULL,  -- Unix ns on the database's clock
	requested_by text NOT NULL DEFAULT '',
	PRIMARY KEY (job, version)
);

-- source_states holds the full set of source states of every version, as
-- the JSON of bookmark.SourceState (json, not jsonb: kept byte for byte).
CREATE TABLE source_states (
	job     text COLLATE "C" NOT NULL,
	version bigint NOT NULL,
	ctx     text COLLATE "C" NOT NULL,
	state   json NOT NULL,
	PRIMARY KEY (job, version, ctx),
	FOREIGN KEY (job, version) REFERENCES bookmark_versions (job, version)
);

-- files holds the file records of each job's current lineage: a record is
-- current while removed_version IS NULL. No foreign key: a 1M-file commit
-- would check every row, and the commit transaction keeps them consistent.
CREATE TABLE files (
	job             text COLLATE "C" NOT NULL,
	ctx             text COLLATE "C" NOT NULL,
	path            text COLLATE "C" NOT NULL,
	size            bigint NOT NULL,
	mtime           bigint NOT NULL,  -- Unix ns
	etag            text NOT NULL DEFAULT '',
	run_id          text COLLATE "C" NOT NULL,
	added_version   bigint NOT NULL,
	removed_version bigint
);
-- files_current serves Files (job, ctx) in path order without a sort and
-- keeps one current record per path.
CREATE UNIQUE INDEX files_current ON files (job, ctx, path) WHERE removed_version IS NULL;
-- files_run serves RunInputs (a run's records by ctx and path).
CREATE INDEX files_run ON files (job, run_id, ctx, path, added_version);
-- A reset deletes records added, and restores those removed, after its target.
CREATE INDEX files_added ON files (job, added_version);
CREATE INDEX files_removed ON files (job, removed_version) WHERE removed_version IS NOT NULL;

-- ranges holds the key range each run read from a SQL table source ctx.
CREATE TABLE ranges (
	job           text COLLATE "C" NOT NULL,
	ctx           text COLLATE "C" NOT NULL,
	run_id        text COLLATE "C" NOT NULL,
	range         bytea NOT NULL,  -- the source's opaque JSON, as it is
	rows          bigint NOT NULL,
	added_version bigint NOT NULL,
	PRIMARY KEY (job, run_id, ctx)
);
CREATE INDEX ranges_added ON ranges (job, added_version);

CREATE TABLE outputs (
	job       text COLLATE "C" NOT NULL,
	run_id    text COLLATE "C" NOT NULL,
	sink      text COLLATE "C" NOT NULL,
	final     text COLLATE "C" NOT NULL,
	kind      text NOT NULL,
	root      text NOT NULL DEFAULT '',
	staged    text NOT NULL DEFAULT '',
	upload_id text NOT NULL DEFAULT '',
	target    json,  -- manifest.Table of a table load
	rejects   text NOT NULL DEFAULT '',
	rows      bigint NOT NULL,
	bytes     bigint NOT NULL,
	published boolean NOT NULL DEFAULT false,
	PRIMARY KEY (job, run_id, sink, final),
	FOREIGN KEY (job, run_id) REFERENCES runs (job, run_id)
);
-- Unpublished looks for a run's unpublished outputs; PublishedOutputs
-- reads a job's published outputs at one root.
CREATE INDEX outputs_unpublished ON outputs (job, run_id) WHERE NOT published;
CREATE INDEX outputs_root ON outputs (job, root) WHERE published;

CREATE TABLE actions (
	job        text COLLATE "C" NOT NULL,
	run_id     text COLLATE "C" NOT NULL,
	n          integer NOT NULL,  -- order within the run
	sink       text NOT NULL,
	root       text NOT NULL,
	mode       text NOT NULL,
	partitions json NOT NULL DEFAULT '[]',
	PRIMARY KEY (job, run_id, n),
	FOREIGN KEY (job, run_id) REFERENCES runs (job, run_id)
);

-- The catalog (package catalog). catalog_heads holds each table's current
-- version: the row a change's compare-and-swap updates.
CREATE TABLE catalog_databases (
	name        text COLLATE "C" PRIMARY KEY,
	description text NOT NULL DEFAULT '',
	created_at  timestamptz NOT NULL
);
CREATE TABLE catalog_heads (
	database text COLLATE "C" NOT NULL,
	name     text COLLATE "C" NOT NULL,
	version  bigint NOT NULL,
	PRIMARY KEY (database, name)
);
CREATE TABLE catalog_tables (
	database       text COLLATE "C" NOT NULL,
	name           text COLLATE "C" NOT NULL,
	version        bigint NOT NULL,
	location       text NOT NULL,
	format         text NOT NULL,
	compression    text NOT NULL DEFAULT '',
	options        json NOT NULL DEFAULT '{}',
	columns        json NOT NULL DEFAULT '[]',
	partition_keys json NOT NULL DEFAULT '[]',
	deprecated     boolean NOT NULL DEFAULT false,
	parameters     json NOT NULL DEFAULT '{}',
	updated_at     timestamptz NOT NULL,
	PRIMARY KEY (database, name, version)
);
CREATE TABLE catalog_partitions (
	database   text COLLATE "C" NOT NULL,
	name       text COLLATE "C" NOT NULL,
	vals       text[] COLLATE "C" NOT NULL,
	location   text NOT NULL,
	deprecated boolean NOT NULL DEFAULT false,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (database, name, vals)
);
`,
}

// migrationLock is the first key of the advisory lock migrations take; the
// second is the schema's hash, so stores in other schemas do not wait.
const migrationLock = 0x544d4b53 // "TMKS"

// migrate brings the schema to len(migrations) in one transaction under a
// transaction-scoped advisory lock, so that many processes opening a new
// store at once create and migrate it once; the others wait for the lock
// and find it done. An up-to-date schema is recognised without the lock.
func (s *conn) migrate(ctx context.Context) error {
	if v, err := s.schemaVersion(ctx, s.pool); err == nil && v == len(migrations) {
		return nil
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrating schema %q: %w", s.schema, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, migrationLock, s.schema); err != nil {
		return fmt.Errorf("migrating schema %q: taking the migration lock: %w", s.schema, err)
	}
	from, err := s.schemaVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrating schema %q: %w", s.schema, err)
	}
	if from > len(migrations) {
		return tooNew(from)
	}
	if from == len(migrations) {
		return nil
	}
	if from < 0 {
		if err := s.claimSchema(ctx, tx); err != nil {
			return fmt.Errorf("migrating schema %q: %w", s.schema, err)
		}
		from = 0
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating schema %q to version %d: %w", s.schema, v+1, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, v+1); err != nil {
			return fmt.Errorf("migrating schema %q to version %d: %w", s.schema, v+1, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrating schema %q: %w", s.schema, err)
	}
	return nil
}

// claimSchema creates the schema and its migrations table. An existing
// schema that holds tables but no migrations table belongs to something
// else and is refused.
func (s *conn) claimSchema(ctx context.Context, tx pgx.Tx) error {
	var tables int
	err := tx.QueryRow(ctx, `
		SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm')`, s.schema).Scan(&tables)
	if err != nil {
		return err
	}
	if tables > 0 {
		return fmt.Errorf("the schema holds %d tables but no tidemark state (no schema_migrations table); "+
			"name another with ?schema=NAME", tables)
	}
	// A schema made beforehand (by an administrator, for a role without
	// CREATE on the database) is used as it is: CREATE SCHEMA checks that
	// privilege even when the schema exists.
	q := pgx.Identifier{s.schema}.Sanitize()
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, s.schema).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE SCHEMA `+q); err != nil {
			return fmt.Errorf("creating schema: %w", err)
		}
	}
	_, err = tx.Exec(ctx, `CREATE TABLE `+q+`.schema_migrations (
		version    integer PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
	)`)
	return err
}

// queryer is what the pool and a transaction share.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// schemaVersion returns the schema's version: -1 when it has no
// migrations table (no state there yet). It reads pg_class rather than
// calling to_regclass: a transaction that waited for the migration lock
// may hold a stale cache entry saying the table is missing, while a scan
// of the catalog sees what committed meanwhile.
func (s *conn) schemaVersion(ctx context.Context, q queryer) (int, error) {
	var exists bool
	err := q.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = 'schema_migrations')`, s.schema).Scan(&exists)
	if err != nil {
		return 0, err
	}
	if !exists {
		return -1, nil
	}
	var v int
	err = q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+pgx.Identifier{s.schema, "schema_migrations"}.Sanitize()).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return v, nil
}
