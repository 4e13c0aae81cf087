package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tidemark-etl/tidemark/catalog"
)

// ApplyCatalog makes c durable in one transaction (see applyCatalog).
func (s *legacy) ApplyCatalog(ctx context.Context, c catalog.Changes) error {
	if err := s.write(ctx, func(tx pgx.Tx) error { return applyCatalog(ctx, tx, c) }); err != nil {
		return s.fail("changing the catalog", err)
	}
	return nil
}

// applyCatalog applies c inside tx, in the contract's order: databases,
// tables, partitions added, partitions dropped. A table change is a
// compare-and-swap on its row of catalog_heads: an insert that must not
// conflict for Base 0, an update from Base otherwise; each locks that one
// row only.
func applyCatalog(ctx context.Context, tx pgConn, c catalog.Changes) error {
	if c.Empty() {
		return nil
	}
	if err := c.Check(); err != nil {
		return err
	}
	for _, d := range c.Databases {
		_, err := tx.Exec(ctx, `
			INSERT INTO catalog_databases (name, description, created_at) VALUES ($1, $2, coalesce($3, clock_timestamp()))
			ON CONFLICT (name) DO NOTHING`, d.Name, d.Description, ts(d.CreatedAt))
		if err != nil {
			return fmt.Errorf("creating catalog database %q: %w", d.Name, err)
		}
	}
	for _, tc := range c.Tables {
		if err := changeTable(ctx, tx, tc); err != nil {
			return err
		}
	}
	keys := map[[2]string][]catalog.Column{} // the partition keys of each table, read once
	for _, p := range c.Partitions {
		k, ok := keys[[2]string{p.Database, p.Table}]
		if !ok {
			var data []byte
			err := tx.QueryRow(ctx, `
				SELECT t.partition_keys FROM catalog_heads h
				JOIN catalog_tables t ON t.database = h.database AND t.name = h.name AND t.version = h.version
				WHERE h.database = $1 AND h.name = $2`, p.Database, p.Table).Scan(&data)
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("adding a partition of table %s.%s: %w", p.Database, p.Table, catalog.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if err := json.Unmarshal(data, &k); err != nil {
				return fmt.Errorf("decoding the partition keys of table %s.%s: %w", p.Database, p.Table, err)
			}
			keys[[2]string{p.Database, p.Table}] = k
		}
		if err := catalog.CheckPartition(catalog.Table{Database: p.Database, Name: p.Table, PartitionKeys: k}, p.Values); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO catalog_partitions (database, name, vals, location, deprecated, updated_at)
			VALUES ($1, $2, $3, $4, $5, clock_timestamp())
			ON CONFLICT (database, name, vals) DO UPDATE SET location = excluded.location,
				deprecated = excluded.deprecated, updated_at = excluded.updated_at`,
			p.Database, p.Table, nonNil(p.Values), p.Location, p.Deprecated)
		if err != nil {
			return fmt.Errorf("adding partition %v of table %s.%s: %w", p.Values, p.Database, p.Table, err)
		}
	}
	for _, p := range c.DropPartitions {
		_, err := tx.Exec(ctx, `DELETE FROM catalog_partitions WHERE database = $1 AND name = $2 AND vals = $3`,
			p.Database, p.Table, nonNil(p.Values))
		if err != nil {
			return fmt.Errorf("dropping partition %v of table %s.%s: %w", p.Values, p.Database, p.Table, err)
		}
	}
	return nil
}

// changeTable writes a new version of one table, or drops it, if its
// current version is still tc.Base.
func changeTable(ctx context.Context, tx pgConn, tc catalog.TableChange) error {
	t := tc.Table
	name := t.Database + "." + t.Name
	conflict := func(cur string) error {
		return fmt.Errorf("table %s: changed against version %d, %s: %w", name, tc.Base, cur, catalog.ErrConflict)
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM catalog_databases WHERE name = $1`, t.Database).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("writing table %s: database %s: %w", name, t.Database, catalog.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("changing table %s: %w", name, err)
	}
	var tag int64
	switch {
	case tc.Base == 0 && !tc.Drop:
		var ct pgconn.CommandTag
		ct, err = tx.Exec(ctx, `INSERT INTO catalog_heads (database, name, version) VALUES ($1, $2, 1) ON CONFLICT DO NOTHING`, t.Database, t.Name)
		tag = ct.RowsAffected()
	case tc.Drop:
		var ct pgconn.CommandTag
		ct, err = tx.Exec(ctx, `DELETE FROM catalog_heads WHERE database = $1 AND name = $2 AND version = $3`, t.Database, t.Name, tc.Base)
		tag = ct.RowsAffected()
	default:
		var ct pgconn.CommandTag
		ct, err = tx.Exec(ctx, `UPDATE catalog_heads SET version = version + 1 WHERE database = $1 AND name = $2 AND version = $3`, t.Database, t.Name, tc.Base)
		tag = ct.RowsAffected()
	}
	if err != nil {
		return fmt.Errorf("changing table %s: %w", name, err)
	}
	if tag == 0 {
		var cur int64
		err := tx.QueryRow(ctx, `SELECT version FROM catalog_heads WHERE database = $1 AND name = $2`, t.Database, t.Name).Scan(&cur)
		if errors.Is(err, pgx.ErrNoRows) {
			if tc.Drop {
				return fmt.Errorf("dropping table %s: %w", name, catalog.ErrNotFound)
			}
			return conflict("it does not exist")
		}
		if err != nil {
			return fmt.Errorf("changing table %s: %w", name, err)
		}
		return conflict(fmt.Sprintf("it is at version %d", cur))
	}
	if tc.Drop {
		for _, q := range []string{
			`DELETE FROM catalog_tables WHERE database = $1 AND name = $2`,
			`DELETE FROM catalog_partitions WHERE database = $1 AND name = $2`,
		} {
			if _, err := tx.Exec(ctx, q, t.Database, t.Name); err != nil {
				return fmt.Errorf("dropping table %s: %w", name, err)
			}
		}
		return nil
	}
	enc := func(v any, empty string) (string, error) {
		b, err := json.Marshal(v)
		if err != nil || string(b) == "null" {
			return empty, err
		}
		return string(b), nil
	}
	opts, err1 := enc(t.Options, "{}")
	cols, err2 := enc(t.Columns, "[]")
	keys, err3 := enc(t.PartitionKeys, "[]")
	params, err4 := enc(t.Parameters, "{}")
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return fmt.Errorf("encoding table %s: %w", name, err)
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO catalog_tables (database, name, version, location, format, compression, options, columns,
			partition_keys, deprecated, parameters, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, clock_timestamp())`,
		t.Database, t.Name, tc.Base+1, t.Location, t.Format, t.Compression, opts, cols, keys, t.Deprecated, params)
	if err != nil {
		return fmt.Errorf("writing version %d of table %s: %w", tc.Base+1, name, err)
	}
	return nil
}

// nonNil makes a nil slice an empty one (a text[] of no elements).
func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// Databases returns every database, by name.
func (s *legacy) Databases(ctx context.Context) ([]catalog.Database, error) {
	rows, err := s.pool.Query(ctx, `SELECT name, description, created_at FROM catalog_databases ORDER BY name`)
	if err == nil {
		var dbs []catalog.Database
		dbs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (catalog.Database, error) {
			var d catalog.Database
			err := row.Scan(&d.Name, &d.Description, &d.CreatedAt)
			d.CreatedAt = d.CreatedAt.UTC()
			return d, err
		})
		if err == nil {
			return dbs, nil
		}
	}
	return nil, s.fail("listing catalog databases", err)
}

// tableColumns is the column list scanTable expects.
const tableColumns = `t.database, t.name, t.version, t.location, t.format, t.compression, t.options, t.columns,
	t.partition_keys, t.deprecated, t.parameters, t.updated_at`

func scanTable(row pgx.CollectableRow) (catalog.Table, error) {
	var t catalog.Table
	var opts, cols, keys, params []byte
	var updated time.Time
	if err := row.Scan(&t.Database, &t.Name, &t.Version, &t.Location, &t.Format, &t.Compression, &opts, &cols,
		&keys, &t.Deprecated, &params, &updated); err != nil {
		return t, err
	}
	t.UpdatedAt = updated.UTC()
	for _, f := range []struct {
		data []byte
		dst  any
	}{{opts, &t.Options}, {cols, &t.Columns}, {keys, &t.PartitionKeys}, {params, &t.Parameters}} {
		if err := json.Unmarshal(f.data, f.dst); err != nil {
			return t, fmt.Errorf("decoding table %s.%s version %d: %w", t.Database, t.Name, t.Version, err)
		}
	}
	if len(t.Options) == 0 {
		t.Options = nil
	}
	if len(t.Parameters) == 0 {
		t.Parameters = nil
	}
	return t, nil
}

// Tables returns the current version of every table of a database, by name.
func (s *legacy) Tables(ctx context.Context, database string) ([]catalog.Table, error) {
	ts, err := s.tables(ctx, `SELECT `+tableColumns+` FROM catalog_tables t
		JOIN catalog_heads h ON h.database = t.database AND h.name = t.name AND h.version = t.version
		WHERE t.database = $1 ORDER BY t.name`, database)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("listing tables of catalog database %q", database), err)
	}
	return ts, nil
}

// Table returns one version of a table (0: the current one).
func (s *legacy) Table(ctx context.Context, database, name string, version int64) (catalog.Table, error) {
	q := `SELECT ` + tableColumns + ` FROM catalog_tables t
		JOIN catalog_heads h ON h.database = t.database AND h.name = t.name
		WHERE t.database = $1 AND t.name = $2 AND t.version = (CASE WHEN $3::bigint = 0 THEN h.version ELSE $3::bigint END)`
	ts, err := s.tables(ctx, q, database, name, version)
	if err == nil && len(ts) == 0 {
		err = catalog.ErrNotFound
	}
	if err != nil {
		return catalog.Table{}, s.fail(fmt.Sprintf("reading table %s.%s version %d", database, name, version), err)
	}
	return ts[0], nil
}

// TableVersions returns every version of a table, newest first.
func (s *legacy) TableVersions(ctx context.Context, database, name string) ([]catalog.Table, error) {
	ts, err := s.tables(ctx, `SELECT `+tableColumns+` FROM catalog_tables t
		WHERE t.database = $1 AND t.name = $2 ORDER BY t.version DESC`, database, name)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("listing versions of table %s.%s", database, name), err)
	}
	return ts, nil
}

func (s *legacy) tables(ctx context.Context, query string, args ...any) ([]catalog.Table, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanTable)
}

// Partitions streams a table's partitions ordered by Values (element by
// element, byte order: the primary key's order).
func (s *legacy) Partitions(ctx context.Context, database, name string) iter.Seq2[catalog.Partition, error] {
	return stream(ctx, s, fmt.Sprintf("listing partitions of table %s.%s", database, name), `
		SELECT vals, location, deprecated, updated_at FROM catalog_partitions
		WHERE database = $1 AND name = $2 ORDER BY vals`, []any{database, name},
		func(rows pgx.Rows) (catalog.Partition, error) {
			p := catalog.Partition{Database: database, Table: name}
			var updated time.Time
			err := rows.Scan(&p.Values, &p.Location, &p.Deprecated, &updated)
			p.UpdatedAt = updated.UTC()
			return p, err
		})
}
