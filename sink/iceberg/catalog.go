package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	iceberg "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/tidemark-etl/tidemark/manifest"
	_ "modernc.org/sqlite" // driver "sqlite"
)

// CatalogName is the name tidemark's own catalog has in its SQL tables
// (their catalog_name column): pyiceberg's SqlCatalog("tidemark", uri=...)
// and Iceberg's JDBC catalog named tidemark read it.
const CatalogName = "tidemark"

// ErrNoOwnCatalog refuses an Iceberg sink without catalog: whose state
// store cannot hold a catalog (S3 or memory state).
var ErrNoOwnCatalog = errors.New("tidemark's own Iceberg catalog lives in a SQLite or PostgreSQL state store")

// tableCatalog is the catalog an Iceberg sink's table is kept in:
// tidemark's own catalog in the state store's database (a SQL catalog
// with the tables of pyiceberg's SqlCatalog and Iceberg's JDBC catalog,
// iceberg_tables and iceberg_namespace_properties, whose commit is an
// UPDATE ... WHERE metadata_location = the one read), or a REST catalog
// (catalog: {rest: ...}), whose server decides each commit.
type tableCatalog struct {
	icecat.Catalog
	close func() error
}

// openCatalog opens the catalog of target: a REST catalog when
// target.Catalog says so, else the own catalog in the state store at
// target.Connection (a store.Identity's Location: a SQLite file's absolute
// path, or a postgres:// URL without password, ?schema= naming the
// state's schema), whose tables are created when missing.
func openCatalog(ctx context.Context, target manifest.Table) (*tableCatalog, error) {
	if target.Catalog == manifest.CatalogREST {
		return openREST(ctx, target)
	}
	location := target.Connection
	db, dialect, err := openStateDB(location)
	if err != nil {
		return nil, err
	}
	c, err := sqlcat.NewCatalog(CatalogName, db, dialect, iceberg.Properties{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the Iceberg catalog in the state store %s: %w", location, err)
	}
	return &tableCatalog{Catalog: c, close: func() error { c.Close(); return db.Close() }}, nil
}

// openREST connects to the REST catalog at target.Connection. The
// credential, from the environment variable target.PasswordEnv, is an
// OAuth2 client credential CLIENT_ID:SECRET (exchanged for a token at the
// catalog's token endpoint) or, without a colon, a bearer token.
func openREST(ctx context.Context, target manifest.Table) (*tableCatalog, error) {
	var opts []rest.Option
	if target.Warehouse != "" {
		opts = append(opts, rest.WithWarehouseLocation(target.Warehouse))
	}
	if env := target.PasswordEnv; env != "" {
		cred, ok := os.LookupEnv(env)
		if !ok || cred == "" {
			return nil, fmt.Errorf("opening the Iceberg REST catalog %s: the credential variable %s (credential_env) is not set",
				target.Connection, env)
		}
		if strings.Contains(cred, ":") {
			opts = append(opts, rest.WithCredential(cred))
		} else {
			opts = append(opts, rest.WithOAuthToken(cred))
		}
	}
	c, err := rest.NewCatalog(ctx, CatalogName, target.Connection, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the Iceberg REST catalog %s: %w", target.Connection, err)
	}
	return &tableCatalog{Catalog: c, close: func() error { return nil }}, nil
}

// stateDialect is the SQL dialect of the state store at location, or
// ErrNoOwnCatalog for a store that holds no SQL database (S3, memory).
func stateDialect(location string) (sqlcat.SupportedDialect, error) {
	switch {
	case strings.HasPrefix(location, "postgres://"), strings.HasPrefix(location, "postgresql://"):
		return sqlcat.Postgres, nil
	case strings.Contains(location, "://"), !filepath.IsAbs(location):
		return "", fmt.Errorf("state store %s: %w; keep the job's state in SQLite or PostgreSQL for an Iceberg sink "+
			"(or keep the table in a REST catalog: iceberg: {catalog: {rest: URL}})", location, ErrNoOwnCatalog)
	}
	return sqlcat.SQLite, nil
}

// openStateDB connects to the state store's database. A PostgreSQL
// password comes from libpq's conventions (PGPASSWORD, ~/.pgpass), as the
// state store's own, and the catalog's tables go in the state's schema.
func openStateDB(location string) (*sql.DB, sqlcat.SupportedDialect, error) {
	dialect, err := stateDialect(location)
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
func (c *tableCatalog) Close() error { return c.close() }

// load loads the table (ok false: it does not exist).
func (c *tableCatalog) load(ctx context.Context, ident table.Identifier) (*table.Table, bool, error) {
	t, err := c.LoadTable(ctx, ident)
	if errors.Is(err, icecat.ErrNoSuchTable) || errors.Is(err, icecat.ErrNoSuchNamespace) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("loading Iceberg table %s: %w", strings.Join(ident, "."), err)
	}
	return t, true, nil
}

// create makes the table at location with schema sc and partition spec
// spec, its namespace too when missing. A table another process created
// meanwhile is loaded.
func (c *tableCatalog) create(ctx context.Context, ident table.Identifier, location string, sc *iceberg.Schema,
	spec iceberg.PartitionSpec) (*table.Table, error) {
	name := strings.Join(ident, ".")
	err := c.CreateNamespace(ctx, ident[:1], iceberg.Properties{})
	if err != nil && !errors.Is(err, icecat.ErrNamespaceAlreadyExists) {
		return nil, fmt.Errorf("creating the namespace of Iceberg table %s: %w", name, err)
	}
	t, err := c.CreateTable(ctx, ident, sc, icecat.WithLocation(location), icecat.WithPartitionSpec(&spec),
		icecat.WithProperties(iceberg.Properties{"format-version": "2"}))
	if errors.Is(err, icecat.ErrTableAlreadyExists) {
		t, ok, err := c.load(ctx, ident)
		if err == nil && !ok {
			err = fmt.Errorf("loading Iceberg table %s: it was dropped while it was created", name)
		}
		return t, err
	}
	if err != nil {
		return nil, fmt.Errorf("creating Iceberg table %s at %s: %w", name, location, err)
	}
	return t, nil
}
