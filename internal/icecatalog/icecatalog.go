// Package icecatalog opens tidemark's own Iceberg catalog: a SQL catalog
// with the tables of pyiceberg's SqlCatalog and Iceberg's JDBC catalog
// (iceberg_tables, iceberg_namespace_properties) in the database of a
// SQLite or PostgreSQL state store. The Iceberg sink and the Iceberg
// source share it; neither imports the other.
package icecatalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	iceberg "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // driver "sqlite"
)

// Name is the name tidemark's own catalog has in its SQL tables (their
// catalog_name column): pyiceberg's SqlCatalog("tidemark", uri=...) and
// Iceberg's JDBC catalog named tidemark read it.
const Name = "tidemark"

// ErrNoOwnCatalog refuses a state store that cannot hold a catalog (S3 or
// memory state).
var ErrNoOwnCatalog = errors.New("tidemark's own Iceberg catalog lives in a SQLite or PostgreSQL state store")

// Catalog is an Iceberg catalog tidemark reads and commits through: the
// own catalog in a state store's database (Open), whose commit is an
// UPDATE ... WHERE metadata_location = the one read, or a REST catalog
// (OpenREST), whose server decides each commit.
type Catalog struct {
	icecat.Catalog
	close func() error
}

// Open opens the own catalog in the state store at location (a
// store.Identity's Location: a SQLite file's absolute path, or a
// postgres:// URL without password, ?schema= naming the state's schema).
// The catalog's tables are created when missing.
func Open(_ context.Context, location string) (*Catalog, error) {
	db, dialect, err := OpenDB(location)
	if err != nil {
		return nil, err
	}
	c, err := sqlcat.NewCatalog(Name, db, dialect, iceberg.Properties{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the Iceberg catalog in the state store %s: %w", location, err)
	}
	return &Catalog{Catalog: c, close: func() error { c.Close(); return db.Close() }}, nil
}

// Dialect is the SQL dialect of the state store at location, or
// ErrNoOwnCatalog for a store that holds no SQL database (S3, memory).
func Dialect(location string) (sqlcat.SupportedDialect, error) {
	switch {
	case strings.HasPrefix(location, "postgres://"), strings.HasPrefix(location, "postgresql://"):
		return sqlcat.Postgres, nil
	case strings.Contains(location, "://"), !filepath.IsAbs(location):
		return "", fmt.Errorf("state store %s: %w; keep the job's state in SQLite or PostgreSQL for an Iceberg table "+
			"in tidemark's own catalog", location, ErrNoOwnCatalog)
	}
	return sqlcat.SQLite, nil
}

// OpenDB connects to the state store's database. A PostgreSQL password
// comes from libpq's conventions (PGPASSWORD, ~/.pgpass), as the state
// store's own, and the catalog's tables go in the state's schema.
func OpenDB(location string) (*sql.DB, sqlcat.SupportedDialect, error) {
	dialect, err := Dialect(location)
	if err != nil {
		return nil, "", err
	}
	if dialect == sqlcat.SQLite {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		db, err := sql.Open("sqlite", "file:"+location+"?"+q.Encode())
		if err != nil {
			return nil, "", fmt.Errorf("opening the Iceberg catalog in the state store %s: %w", location, err)
		}
		return db, dialect, nil
	}
	u, err := url.Parse(location)
	if err != nil {
		return nil, "", fmt.Errorf("opening the Iceberg catalog in the state store: not a valid URL")
	}
	q := u.Query()
	schema := "tidemark"
	if q.Has("schema") {
		schema = q.Get("schema")
		q.Del("schema")
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, "", fmt.Errorf("opening the Iceberg catalog in the state store %s: %w", location, err)
	}
	cfg.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	cfg.RuntimeParams["application_name"] = "tidemark iceberg"
	return stdlib.OpenDB(*cfg), dialect, nil
}

// Close closes the catalog's connections.
func (c *Catalog) Close() error { return c.close() }

// Load loads the table (ok false: it does not exist).
func (c *Catalog) Load(ctx context.Context, ident table.Identifier) (*table.Table, bool, error) {
	t, err := c.LoadTable(ctx, ident)
	if errors.Is(err, icecat.ErrNoSuchTable) || errors.Is(err, icecat.ErrNoSuchNamespace) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("loading Iceberg table %s: %w", strings.Join(ident, "."), err)
	}
	return t, true, nil
}
