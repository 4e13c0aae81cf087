package postgres

// The relational format (schema version 1: tables of runs, files,
// versions, leases, ...) that tidemark wrote before the objects format.
// It is read here only to move a state over, once, into state_objects.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
	"github.com/tidemark-etl/tidemark/store/sqlobj"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// objectsVersion is the schema version of the objects format: one past
// the relational migrations, so that an older tidemark, which knows up to
// len(migrations), refuses the schema as written by a newer one instead
// of writing tables nobody reads.
const objectsVersion = 2

// legacy is a relational state, read through the SQL store core.
type legacy struct {
	*sqlstore.Core
	*conn
}

func (c *conn) legacy() *legacy {
	s := &legacy{conn: c}
	s.Core = sqlstore.New(dialect{s}, leases{s})
	return s
}

// Identity returns the id the relational state was made with.
func (s *legacy) Identity(ctx context.Context) (store.Identity, error) {
	var id string
	if err := s.pool.QueryRow(ctx, `SELECT id FROM store_identity`).Scan(&id); err != nil {
		return store.Identity{}, s.fail("reading the store's identity", err)
	}
	return store.Identity{ID: id, Location: s.where}, nil
}

// Close closes nothing: the connections are its opener's.
func (s *legacy) Close() error { return nil }

// Stats reports nothing: a relational state is only read to move it over.
func (s *legacy) Stats(context.Context) (map[string]int64, error) { return map[string]int64{}, nil }

// upgrade brings the schema to the objects format: a missing or older
// schema is migrated to the last relational version (as before: a new one
// is made so, with its identity) and then converted.
func (c *conn) upgrade(ctx context.Context) error {
	if v, err := c.schemaVersion(ctx, c.pool); err == nil && v == objectsVersion {
		return nil
	} else if err == nil && v > objectsVersion {
		return tooNew(v)
	}
	if err := c.migrate(ctx); err != nil && !isTooNew(err) {
		return err
	}
	return c.convert(ctx)
}

func isTooNew(err error) bool { return errors.Is(err, ErrSchemaTooNew) }

// convert moves a relational state into state_objects in one transaction
// under the migration lock: every job through the state copy path
// (statecopy.Copy, which reads each job back from the objects and
// compares), then the catalog; then it drops the relational tables and
// records the objects version. The tables are dropped, not renamed: the
// copy was read back and compared inside the same transaction, so they
// hold nothing more, and kept they would double the state for no reader
// (a binary that reads them refuses the version). The tables are locked
// in SHARE mode first: the copy reads them on other connections, and no
// tidemark before this one can write them until the commit.
func (c *conn) convert(ctx context.Context) error {
	db := stdlib.OpenDBFromPool(c.pool)
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("converting schema %q to objects: %w", c.schema, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, migrationLock, c.schema); err != nil {
		return fmt.Errorf("converting schema %q to objects: taking the migration lock: %w", c.schema, err)
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return fmt.Errorf("converting schema %q to objects: reading schema version: %w", c.schema, err)
	}
	switch {
	case v == objectsVersion: // another process converted it
		return nil
	case v > objectsVersion:
		return tooNew(v)
	case v != len(migrations):
		return fmt.Errorf("converting schema %q to objects: version %d, want %d", c.schema, v, len(migrations))
	}
	tables, err := c.relationalTables(ctx, tx)
	if err != nil {
		return fmt.Errorf("converting schema %q to objects: %w", c.schema, err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE `+tables+` IN SHARE MODE`); err != nil {
		return fmt.Errorf("converting schema %q to objects: locking its tables: %w", c.schema, err)
	}
	if err := sqlobj.Create(ctx, tx, c.objects()); err != nil {
		return fmt.Errorf("converting schema %q to objects: %w", c.schema, err)
	}
	b := sqlobj.New(tx, c.objects(), c.where+"#")
	if _, err := sqlobj.CopyState(ctx, c.legacy(), b, "postgres", false); err != nil {
		return fmt.Errorf("converting schema %q to objects: %w", c.schema, err)
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE `+tables); err != nil {
		return fmt.Errorf("converting schema %q to objects: dropping the relational tables: %w", c.schema, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, objectsVersion); err != nil {
		return fmt.Errorf("converting schema %q to objects: %w", c.schema, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("converting schema %q to objects: %w", c.schema, err)
	}
	return nil
}

// relationalTables lists the schema's tables but schema_migrations and
// state_objects, quoted and separated by commas.
func (c *conn) relationalTables(ctx context.Context, tx *sql.Tx) (string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = $1
		AND tablename NOT IN ('schema_migrations', $2) AND tablename NOT LIKE 'iceberg\_%'
		ORDER BY tablename`, c.schema, sqlobj.Table)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	list := ""
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return "", err
		}
		if list != "" {
			list += ", "
		}
		list += pgx.Identifier{c.schema, t}.Sanitize()
	}
	return list, rows.Err()
}

// openLegacy reads a relational schema without writing it (read-only
// sessions): every job and the catalog are copied into an object store in
// memory, which the store reads. A schema older than the last relational
// version is refused: reading it needs a migration, which takes a write.
func (c *conn) openLegacy(ctx context.Context, v int) (*Store, error) {
	if v < len(migrations) {
		c.pool.Close()
		return nil, c.fail("opening postgres state store read-only",
			fmt.Errorf("schema %q has version %d and needs an upgrade to %d, which takes a write (tidemark run does it)", c.schema, v, objectsVersion))
	}
	core, err := sqlobj.CopyState(ctx, c.legacy(), objcore.NewMemBackend(c.where+"#", nil), "postgres", true)
	if err != nil {
		c.pool.Close()
		return nil, c.fail("opening postgres state store read-only: reading the relational state into memory", err)
	}
	return &Store{Store: core, conn: c, db: stdlib.OpenDBFromPool(c.pool)}, nil
}
