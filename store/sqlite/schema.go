package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrSchemaTooNew is returned by Open for a database whose schema version is
// newer than this binary knows: it was written by a newer tidemark.
var ErrSchemaTooNew = errors.New("state database schema is newer than this tidemark supports")

// applicationID marks the file as a tidemark state database (PRAGMA
// application_id, "TDMK"), so that Open refuses other SQLite databases.
const applicationID = 0x54444d4b

// migrations are applied in order; migrations[i] brings the schema from
// version i to i+1. Append only: never edit a released migration.
var migrations = []string{
	// 1: the initial schema.
	`
-- lease_tokens keeps each job's last fencing token; it outlives the lease
-- row, so tokens grow across release and re-acquire.
CREATE TABLE lease_tokens (
	job        TEXT PRIMARY KEY,
	last_token INTEGER NOT NULL
) STRICT;

-- leases holds the current lease of each job; releasing deletes the row.
CREATE TABLE leases (
	job       TEXT PRIMARY KEY,
	token     INTEGER NOT NULL,
	holder_id TEXT NOT NULL,
	host      TEXT NOT NULL,
	pid       INTEGER NOT NULL,
	started   INTEGER NOT NULL,  -- Unix ns
	expires   INTEGER NOT NULL   -- Unix ns
) STRICT;

CREATE TABLE runs (
	job         TEXT NOT NULL,
	run_id      TEXT NOT NULL,
	seq         INTEGER NOT NULL,
	attempt     INTEGER NOT NULL,
	mode        TEXT NOT NULL,
	status      TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
	started_at  INTEGER NOT NULL,
	finished_at INTEGER NOT NULL DEFAULT 0,
	version     INTEGER NOT NULL DEFAULT 0,
	undone      INTEGER NOT NULL DEFAULT 0,
	purged      INTEGER NOT NULL DEFAULT 0,
	summary     TEXT NOT NULL DEFAULT '{}',  -- JSON {"sources":{..},"sinks":{..}}
	error       TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (job, run_id),
	UNIQUE (job, seq)
) STRICT;

-- bookmark_versions keeps every version; a job's head is its max version.
-- run_id is the committing run (kind commit) or the rewind target (kind
-- reset, '' for a full reset).
CREATE TABLE bookmark_versions (
	job        TEXT NOT NULL,
	version    INTEGER NOT NULL,
	run_id     TEXT NOT NULL,
	kind       TEXT NOT NULL CHECK (kind IN ('commit', 'reset')),
	created_at INTEGER NOT NULL,
	PRIMARY KEY (job, version)
) STRICT;

-- source_states holds the full set of source states of every version.
CREATE TABLE source_states (
	job     TEXT NOT NULL,
	version INTEGER NOT NULL,
	ctx     TEXT NOT NULL,
	state   BLOB NOT NULL,  -- JSON bookmark.SourceState
	PRIMARY KEY (job, version, ctx),
	FOREIGN KEY (job, version) REFERENCES bookmark_versions (job, version)
) STRICT;

-- files holds the file records of the current lineage of each job: a record
-- is current while removed_version IS NULL. path uses the default BINARY
-- collation: memcmp of UTF-8, which is Go's string order.
CREATE TABLE files (
	job             TEXT NOT NULL,
	ctx             TEXT NOT NULL,
	path            TEXT NOT NULL,
	size            INTEGER NOT NULL,
	mtime           INTEGER NOT NULL,  -- Unix ns
	etag            TEXT NOT NULL DEFAULT '',
	run_id          TEXT NOT NULL,
	added_version   INTEGER NOT NULL,
	removed_version INTEGER,
	FOREIGN KEY (job, run_id) REFERENCES runs (job, run_id)
) STRICT;
-- files_current serves Files (job, ctx) in path order without a sort, and
-- guarantees one current record per path.
CREATE UNIQUE INDEX files_current ON files (job, ctx, path) WHERE removed_version IS NULL;
CREATE INDEX files_run ON files (job, run_id);
CREATE INDEX files_added ON files (job, added_version);
CREATE INDEX files_removed ON files (job, removed_version) WHERE removed_version IS NOT NULL;

CREATE TABLE outputs (
	job       TEXT NOT NULL,
	run_id    TEXT NOT NULL,
	sink      TEXT NOT NULL,
	root      TEXT NOT NULL,
	staged    TEXT NOT NULL,
	final     TEXT NOT NULL,
	rows      INTEGER NOT NULL,
	bytes     INTEGER NOT NULL,
	published INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (job, run_id, sink, final),
	FOREIGN KEY (job, run_id) REFERENCES runs (job, run_id)
) STRICT;
CREATE INDEX outputs_unpublished ON outputs (job, run_id) WHERE published = 0;

CREATE TABLE actions (
	job        TEXT NOT NULL,
	run_id     TEXT NOT NULL,
	n          INTEGER NOT NULL,  -- order within the run
	sink       TEXT NOT NULL,
	root       TEXT NOT NULL,
	mode       TEXT NOT NULL,
	partitions TEXT NOT NULL DEFAULT '[]',  -- JSON array
	PRIMARY KEY (job, run_id, n),
	FOREIGN KEY (job, run_id) REFERENCES runs (job, run_id)
) STRICT;
`,
	// 2: the store's identity (store.Identity), made once at random.
	`
CREATE TABLE store_identity (
	id TEXT NOT NULL
) STRICT;
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));
`,
	// 3: typed manifests (package manifest). Outputs get a kind of their
	// own, the upload id, the table target and the rejects' source ctx,
	// which the release before kept inside strings: Staged "upload:<id>",
	// Root "table:{json}" (Staged "stage table"), Sink "rejects:<ctx>". A
	// SQL table source's key ranges move out of the fake file records
	// "range/<run>" (ETag: the range, Size: the rows) into ranges, and its
	// state's run and row counts out of files and bytes into runs and rows.
	`
ALTER TABLE outputs ADD COLUMN kind TEXT NOT NULL DEFAULT 'file';
ALTER TABLE outputs ADD COLUMN upload_id TEXT NOT NULL DEFAULT '';
ALTER TABLE outputs ADD COLUMN target TEXT NOT NULL DEFAULT '';  -- JSON manifest.Table of a table load
ALTER TABLE outputs ADD COLUMN rejects TEXT NOT NULL DEFAULT '';
UPDATE outputs SET kind = 'upload', upload_id = substr(staged, 8), staged = ''
	WHERE substr(staged, 1, 7) = 'upload:';
-- The old JSON has Go's field names (sinksql.SinkConfig had no json tags):
-- PasswordEnv and MergeKeys would not decode into manifest.Table.
UPDATE outputs SET kind = 'table_load', root = '', staged = '', target = json_object(
		'ctx', substr(root, 7) ->> '$.Ctx', 'connection', substr(root, 7) ->> '$.Connection',
		'password_env', substr(root, 7) ->> '$.PasswordEnv', 'table', substr(root, 7) ->> '$.Table',
		'mode', substr(root, 7) ->> '$.Mode', 'merge_keys', substr(root, 7) -> '$.MergeKeys')
	WHERE substr(root, 1, 6) = 'table:';
UPDATE outputs SET rejects = substr(sink, 9), sink = ''
	WHERE substr(sink, 1, 8) = 'rejects:';

-- ranges holds the key range each run read from a SQL table source ctx;
-- a reset deletes those added after its target version.
CREATE TABLE ranges (
	job           TEXT NOT NULL,
	ctx           TEXT NOT NULL,
	run_id        TEXT NOT NULL,
	range         TEXT NOT NULL,  -- JSON, the source's opaque range
	rows          INTEGER NOT NULL,
	added_version INTEGER NOT NULL,
	PRIMARY KEY (job, run_id, ctx),
	FOREIGN KEY (job, run_id) REFERENCES runs (job, run_id)
) STRICT;
CREATE INDEX ranges_added ON ranges (job, added_version);
INSERT INTO ranges (job, ctx, run_id, range, rows, added_version)
	SELECT f.job, f.ctx, f.run_id, f.etag, f.size, f.added_version FROM files f
	WHERE f.path = 'range/' || f.run_id
	  AND EXISTS (SELECT 1 FROM source_states s WHERE s.job = f.job AND s.ctx = f.ctx
	              AND json_extract(CAST(s.state AS TEXT), '$.kind') = 'table');
DELETE FROM files WHERE EXISTS (SELECT 1 FROM ranges r
	WHERE r.job = files.job AND r.ctx = files.ctx AND r.run_id = files.run_id AND files.path = 'range/' || files.run_id);
UPDATE source_states SET state = CAST(json_set(CAST(state AS TEXT),
		'$.runs', json_extract(CAST(state AS TEXT), '$.files'),
		'$.rows', json_extract(CAST(state AS TEXT), '$.bytes'),
		'$.files', 0, '$.bytes', 0) AS BLOB)
	WHERE json_extract(CAST(state AS TEXT), '$.kind') = 'table';
`,
	// 4: who asked for each reset or rewind (store.Version.By); '' for
	// commits and for versions written before.
	`
ALTER TABLE bookmark_versions ADD COLUMN requested_by TEXT NOT NULL DEFAULT '';
`,
	// 5: the data catalog (package catalog): databases, every version of
	// each table, and partitions keyed by catalog.ValuesKey, whose byte
	// order (a BLOB compares with memcmp) is the order Partitions yields.
	`
CREATE TABLE catalog_databases (
	name        TEXT PRIMARY KEY,
	description TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL  -- Unix ns
) STRICT;

-- catalog_tables keeps every version of each table; a table's current
-- version is its max version; a drop deletes them all.
CREATE TABLE catalog_tables (
	db_name    TEXT NOT NULL,
	table_name TEXT NOT NULL,
	version    INTEGER NOT NULL,
	body       TEXT NOT NULL,  -- JSON catalog.Table (version and updated_at in their columns)
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (db_name, table_name, version)
) STRICT;

CREATE TABLE catalog_partitions (
	db_name    TEXT NOT NULL,
	table_name TEXT NOT NULL,
	key        BLOB NOT NULL,  -- catalog.ValuesKey(values)
	vals       TEXT NOT NULL,  -- JSON array of the values
	location   TEXT NOT NULL,
	deprecated INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (db_name, table_name, key)
) STRICT;
`,
	// 6: the host identity that ran each run (store.Run.Host); '' for runs
	// recorded before.
	`
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
`,
}

// migrate brings the schema to len(migrations) in one write transaction, so
// that two processes opening a new file at once do not both migrate it. An
// up-to-date database is recognised without taking the write lock.
func migrate(ctx context.Context, db *sql.DB) error {
	if upToDate(ctx, db) {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	defer tx.Rollback()
	from, err := schemaVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	if from > len(migrations) {
		return fmt.Errorf("%w: the file has schema version %d, this tidemark knows up to %d; upgrade tidemark",
			ErrSchemaTooNew, from, len(migrations))
	}
	if from == len(migrations) {
		return nil
	}
	for v := from; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, len(migrations)); err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	return nil
}

// upToDate reports whether db is a tidemark database at the current schema
// version. Any doubt (and any error) answers false: migrate then decides
// under the write lock.
func upToDate(ctx context.Context, db *sql.DB) bool {
	var appID int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil || appID != applicationID {
		return false
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return false
	}
	return v == len(migrations)
}

// schemaVersion returns the database's schema version, creating the
// schema_version table (version 0) in an empty database. A database that has
// tables but is not a tidemark state database is refused.
func schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	var appID int64
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, err
	}
	var tables int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table'`).Scan(&tables); err != nil {
		return 0, err
	}
	switch {
	case appID == 0 && tables == 0:
		// A new database: claim it.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE schema_version (version INTEGER NOT NULL) STRICT`); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return 0, err
		}
		return 0, nil
	case appID != applicationID:
		return 0, fmt.Errorf("not a tidemark state database (application_id %#x, %d tables)", appID, tables)
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return v, nil
}
