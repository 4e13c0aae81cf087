package sqlite

// The relational format (schema versions 1 to 6: tables of runs, files,
// versions, ...) that tidemark wrote before the objects format. It is
// read here only to move a state over, once, into state_objects.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlobj"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// objectsVersion is the schema version of the objects format: one past
// the relational migrations, so that an older tidemark, which knows up to
// len(migrations), refuses the file as written by a newer one instead of
// writing tables nobody reads.
const objectsVersion = 7

// legacy is a relational state, read through the SQL store core.
type legacy struct {
	*sqlstore.Core
	db   *sql.DB
	path string
}

func newLegacy(db *sql.DB, path string) *legacy {
	s := &legacy{db: db, path: path}
	s.Core = sqlstore.New(dialect{s}, leases{s})
	return s
}

// Identity returns the id the relational state was made with.
func (s *legacy) Identity(ctx context.Context) (store.Identity, error) {
	var id string
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM store_identity`).Scan(&id); err != nil {
		return store.Identity{}, fmt.Errorf("reading the identity of %s: %w", s.path, err)
	}
	return store.Identity{ID: id, Location: s.path}, nil
}

// Close closes nothing: the database is its opener's.
func (s *legacy) Close() error { return nil }

// Stats reports nothing: a relational state is only read to move it over.
func (s *legacy) Stats(context.Context) (map[string]int64, error) { return map[string]int64{}, nil }

// upgrade brings the file to the objects format under SQLite's write
// lock: a new file gets the objects table; a relational one is migrated to
// the last relational version (as before) and then converted (convert).
func upgrade(ctx context.Context, db *sql.DB, abs string) error {
	if v, err := version(ctx, db); err == nil && v == objectsVersion {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (the DSN's _txlock)
	if err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	defer tx.Rollback()
	v, err := schemaVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("migrating schema: %w", err)
	}
	switch {
	case v > objectsVersion:
		return fmt.Errorf("%w: the file has schema version %d, this tidemark knows up to %d; upgrade tidemark",
			ErrSchemaTooNew, v, objectsVersion)
	case v == objectsVersion:
		return nil
	case v == 0: // a new file
		if err := sqlobj.Create(ctx, tx, objects); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, objectsVersion); err != nil {
			return fmt.Errorf("migrating schema: %w", err)
		}
		return tx.Commit()
	}
	tx.Rollback()
	if err := migrate(ctx, db); err != nil {
		return err
	}
	return convert(ctx, db, abs)
}

// version reads the schema version without a write lock (any error: ask
// under the lock).
func version(ctx context.Context, db *sql.DB) (int, error) {
	var appID int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil || appID != applicationID {
		return 0, errors.New("not a tidemark state database")
	}
	var v int
	err := db.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	return v, err
}

// convert moves a relational state at the last relational version into
// state_objects in one write transaction: every job through the state
// copy path (statecopy.Copy, which reads each job back from the objects
// and compares), then the catalog; then it drops the relational tables and
// sets the objects version. The tables are dropped, not renamed: the copy
// was read back and compared inside the same transaction, so they hold
// nothing more, and kept they would double the file for no reader (a
// binary that reads them refuses the version). Readers meanwhile read the
// relational tables (the other connections' snapshot); the write lock
// keeps writers out until the commit.
func convert(ctx context.Context, db *sql.DB, abs string) error {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return fmt.Errorf("converting the state to objects: %w", err)
	}
	defer tx.Rollback()
	v, err := schemaVersion(ctx, tx)
	switch {
	case err != nil:
		return fmt.Errorf("converting the state to objects: %w", err)
	case v == objectsVersion: // another process converted it
		return nil
	case v != len(migrations):
		return fmt.Errorf("converting the state to objects: schema version %d, want %d", v, len(migrations))
	}
	from := newLegacy(db, abs)
	if err := moveOver(ctx, from, tx, abs); err != nil {
		return fmt.Errorf("converting the state to objects: %w", err)
	}
	if err := dropRelational(ctx, tx); err != nil {
		return fmt.Errorf("converting the state to objects: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, objectsVersion); err != nil {
		return fmt.Errorf("converting the state to objects: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("converting the state to objects: %w", err)
	}
	return nil
}

// moveOver creates state_objects in q and copies every job and the
// catalog of from into it, keeping the store's id.
func moveOver(ctx context.Context, from *legacy, q sqlobj.Querier, abs string) error {
	if err := sqlobj.Create(ctx, q, objects); err != nil {
		return err
	}
	_, err := sqlobj.CopyState(ctx, from, sqlobj.New(q, objects, abs+"#"), "sqlite", false)
	return err
}

// dropRelational drops every table but state_objects and schema_version
// (foreign keys checked at the commit, when none is left), and but the
// tables of tidemark's own Iceberg catalog (iceberg_tables,
// iceberg_namespace_properties: the SQL catalog Iceberg sinks keep in the
// state's database), which are not the state's.
func dropRelational(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table'
		AND name NOT IN (?, 'schema_version') AND name NOT LIKE 'sqlite_%'
		AND name NOT LIKE 'iceberg\_%' ESCAPE '\'`, sqlobj.Table)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE "`+t+`"`); err != nil {
			return fmt.Errorf("dropping table %s: %w", t, err)
		}
	}
	return nil
}
