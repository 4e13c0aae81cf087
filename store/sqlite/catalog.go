package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// ApplyCatalog applies c in one write transaction, or nothing of it.
func (s *legacy) ApplyCatalog(ctx context.Context, c catalog.Changes) error {
	err := s.write(ctx, func(tx *sql.Tx) error { return applyCatalog(ctx, tx, c, time.Now()) })
	if err != nil {
		return fmt.Errorf("changing the catalog: %w", err)
	}
	return nil
}

// applyCatalog applies c inside a write transaction (ApplyCatalog, and
// Commit with Commit.Catalog); now stamps what c leaves zero. On error the
// caller rolls back.
func applyCatalog(ctx context.Context, tx sqlstore.SQLConn, c catalog.Changes, now time.Time) error {
	if c.Empty() {
		return nil
	}
	if err := c.Check(); err != nil {
		return err
	}
	for _, d := range c.Databases {
		created := d.CreatedAt
		if created.IsZero() {
			created = now
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO catalog_databases (name, description, created_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, d.Name, d.Description, nanos(created))
		if err != nil {
			return fmt.Errorf("writing database %s: %w", d.Name, err)
		}
	}
	for _, tc := range c.Tables {
		if err := applyTable(ctx, tx, tc, now); err != nil {
			return err
		}
	}
	for _, p := range c.Partitions {
		cur, err := currentTable(ctx, tx, p.Database, p.Table)
		if err != nil {
			return fmt.Errorf("adding a partition to table %s.%s: %w", p.Database, p.Table, err)
		}
		if err := catalog.CheckPartition(cur, p.Values); err != nil {
			return err
		}
		vals, err := json.Marshal(p.Values)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO catalog_partitions (db_name, table_name, key, vals, location, deprecated, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (db_name, table_name, key) DO UPDATE SET
				vals = excluded.vals, location = excluded.location,
				deprecated = excluded.deprecated, updated_at = excluded.updated_at`,
			p.Database, p.Table, catalog.ValuesKey(p.Values), string(vals), p.Location, boolInt(p.Deprecated), nanos(now))
		if err != nil {
			return fmt.Errorf("writing partition %v of table %s.%s: %w", p.Values, p.Database, p.Table, err)
		}
	}
	for _, p := range c.DropPartitions {
		_, err := tx.ExecContext(ctx, `DELETE FROM catalog_partitions WHERE db_name = ? AND table_name = ? AND key = ?`,
			p.Database, p.Table, catalog.ValuesKey(p.Values))
		if err != nil {
			return fmt.Errorf("dropping partition %v of table %s.%s: %w", p.Values, p.Database, p.Table, err)
		}
	}
	return nil
}

// applyTable writes one table change: its compare-and-swap on the current
// version, then the new version or the drop.
func applyTable(ctx context.Context, tx sqlstore.SQLConn, tc catalog.TableChange, now time.Time) error {
	t := tc.Table
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM catalog_databases WHERE name = ?`, t.Database).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("writing table %s.%s: database %s: %w", t.Database, t.Name, t.Database, catalog.ErrNotFound)
	}
	var cur int64
	err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM catalog_tables WHERE db_name = ? AND table_name = ?`,
		t.Database, t.Name).Scan(&cur)
	if err != nil {
		return err
	}
	if tc.Drop && cur == 0 {
		return fmt.Errorf("dropping table %s.%s: %w", t.Database, t.Name, catalog.ErrNotFound)
	}
	if tc.Base != cur {
		return fmt.Errorf("writing table %s.%s on version %d, its current version is %d: %w",
			t.Database, t.Name, tc.Base, cur, catalog.ErrConflict)
	}
	if tc.Drop {
		for _, q := range []string{
			`DELETE FROM catalog_partitions WHERE db_name = ? AND table_name = ?`,
			`DELETE FROM catalog_tables WHERE db_name = ? AND table_name = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, t.Database, t.Name); err != nil {
				return fmt.Errorf("dropping table %s.%s: %w", t.Database, t.Name, err)
			}
		}
		return nil
	}
	t.Version, t.UpdatedAt = 0, time.Time{}
	body, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encoding table %s.%s: %w", t.Database, t.Name, err)
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO catalog_tables (db_name, table_name, version, body, updated_at) VALUES (?, ?, ?, ?, ?)`,
		t.Database, t.Name, cur+1, string(body), nanos(now))
	if err != nil {
		return fmt.Errorf("writing table %s.%s version %d: %w", t.Database, t.Name, cur+1, err)
	}
	return nil
}

// tableColumns are the columns scanTable reads.
const tableColumns = `body, version, updated_at`

// scanTable decodes one row of tableColumns.
func scanTable(scan func(...any) error) (catalog.Table, error) {
	var body string
	var version, updated int64
	if err := scan(&body, &version, &updated); err != nil {
		return catalog.Table{}, err
	}
	var t catalog.Table
	if err := json.Unmarshal([]byte(body), &t); err != nil {
		return catalog.Table{}, fmt.Errorf("decoding table: %w", err)
	}
	t.Version, t.UpdatedAt = version, fromNanos(updated)
	return t, nil
}

// currentTable reads a table's current version; catalog.ErrNotFound if
// there is none.
func currentTable(ctx context.Context, q querier, database, name string) (catalog.Table, error) {
	return tableVersion(ctx, q, database, name, 0)
}

// tableVersion reads one version of a table (0: the current one).
func tableVersion(ctx context.Context, q querier, database, name string, version int64) (catalog.Table, error) {
	query := `SELECT ` + tableColumns + ` FROM catalog_tables WHERE db_name = ? AND table_name = ? AND version = ?`
	args := []any{database, name, version}
	if version == 0 {
		query = `SELECT ` + tableColumns + ` FROM catalog_tables WHERE db_name = ? AND table_name = ?
			ORDER BY version DESC LIMIT 1`
		args = args[:2]
	}
	t, err := scanTable(q.QueryRowContext(ctx, query, args...).Scan)
	switch {
	case errors.Is(err, sql.ErrNoRows) && version == 0:
		return catalog.Table{}, fmt.Errorf("table %s.%s: %w", database, name, catalog.ErrNotFound)
	case errors.Is(err, sql.ErrNoRows):
		return catalog.Table{}, fmt.Errorf("table %s.%s version %d: %w", database, name, version, catalog.ErrNotFound)
	case err != nil:
		return catalog.Table{}, fmt.Errorf("reading table %s.%s: %w", database, name, err)
	}
	return t, nil
}

// Databases returns every database, by name.
func (s *legacy) Databases(ctx context.Context) ([]catalog.Database, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, description, created_at FROM catalog_databases ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing databases: %w", err)
	}
	defer rows.Close()
	var out []catalog.Database
	for rows.Next() {
		var d catalog.Database
		var created int64
		if err := rows.Scan(&d.Name, &d.Description, &created); err != nil {
			return nil, fmt.Errorf("listing databases: %w", err)
		}
		d.CreatedAt = fromNanos(created)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing databases: %w", err)
	}
	return out, nil
}

// Tables returns the current version of every table of database, by name.
func (s *legacy) Tables(ctx context.Context, database string) ([]catalog.Table, error) {
	return s.tables(ctx, "tables of database "+database, `
		SELECT `+tableColumns+` FROM catalog_tables t
		WHERE db_name = ? AND version = (SELECT max(version) FROM catalog_tables u
			WHERE u.db_name = t.db_name AND u.table_name = t.table_name)
		ORDER BY table_name`, database)
}

// Table returns one version of a table (0: the current one).
func (s *legacy) Table(ctx context.Context, database, name string, version int64) (catalog.Table, error) {
	return tableVersion(ctx, s.db, database, name, version)
}

// TableVersions returns every version of a table, newest first.
func (s *legacy) TableVersions(ctx context.Context, database, name string) ([]catalog.Table, error) {
	return s.tables(ctx, "versions of table "+database+"."+name, `
		SELECT `+tableColumns+` FROM catalog_tables WHERE db_name = ? AND table_name = ?
		ORDER BY version DESC`, database, name)
}

// tables reads the tables query selects (tableColumns), naming what in
// errors.
func (s *legacy) tables(ctx context.Context, what, query string, args ...any) ([]catalog.Table, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	defer rows.Close()
	var out []catalog.Table
	for rows.Next() {
		t, err := scanTable(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", what, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing %s: %w", what, err)
	}
	return out, nil
}

// Partitions streams a table's partitions in key order (the primary key:
// no sort step), from one query's snapshot.
func (s *legacy) Partitions(ctx context.Context, database, name string) iter.Seq2[catalog.Partition, error] {
	return func(yield func(catalog.Partition, error) bool) {
		fail := func(err error) {
			yield(catalog.Partition{}, fmt.Errorf("listing partitions of table %s.%s: %w", database, name, err))
		}
		rows, err := s.db.QueryContext(ctx, `
			SELECT vals, location, deprecated, updated_at FROM catalog_partitions
			WHERE db_name = ? AND table_name = ? ORDER BY key`, database, name)
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			p := catalog.Partition{Database: database, Table: name}
			var vals string
			var updated int64
			if err := rows.Scan(&vals, &p.Location, &p.Deprecated, &updated); err != nil {
				fail(err)
				return
			}
			if err := json.Unmarshal([]byte(vals), &p.Values); err != nil {
				fail(err)
				return
			}
			p.UpdatedAt = fromNanos(updated)
			if !yield(p, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	}
}
