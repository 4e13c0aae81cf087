package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	iceberg "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	_ "modernc.org/sqlite" // driver "sqlite"

	"github.com/tidemark-etl/tidemark/internal/icecatalog"
)

// CatalogName is the name tidemark's own catalog has in its SQL tables
// (their catalog_name column): pyiceberg's SqlCatalog("tidemark", uri=...)
// and Iceberg's JDBC catalog named tidemark read it.
const CatalogName = icecatalog.Name

// ErrNoOwnCatalog refuses an Iceberg sink without catalog: whose state
// store cannot hold a catalog (S3 or memory state).
var ErrNoOwnCatalog = icecatalog.ErrNoOwnCatalog

// ownCatalog is tidemark's own catalog in a state store's database: a SQL
// catalog with the tables of pyiceberg's SqlCatalog and Iceberg's JDBC
// catalog (iceberg_tables, iceberg_namespace_properties), whose commit
// is an UPDATE ... WHERE metadata_location = the one read.
type ownCatalog struct {
	*sqlcat.Catalog
	db *sql.DB
}

// openCatalog opens the own catalog in the state store at location (a
// store.Identity's Location: a SQLite file's absolute path, or a
// postgres:// URL without password, ?schema= naming the state's schema).
// The catalog's tables are created when missing.
func openCatalog(ctx context.Context, location string) (*ownCatalog, error) {
	db, dialect, err := openStateDB(location)
	if err != nil {
		return nil, err
	}
	c, err := sqlcat.NewCatalog(CatalogName, db, dialect, iceberg.Properties{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the Iceberg catalog in the state store %s: %w", location, err)
	}
	return &ownCatalog{Catalog: c, db: db}, nil
}

// stateDialect is the SQL dialect of the state store at location, or
// ErrNoOwnCatalog for a store that holds no SQL database (S3, memory).
func stateDialect(location string) (sqlcat.SupportedDialect, error) {
	return icecatalog.Dialect(location)
}

// openStateDB connects to the state store's database (icecatalog.OpenDB).
func openStateDB(location string) (*sql.DB, sqlcat.SupportedDialect, error) {
	return icecatalog.OpenDB(location)
}

// Close closes the catalog's connections.
func (c *ownCatalog) Close() error {
	c.Catalog.Close()
	return c.db.Close()
}

// load loads the table (ok false: it does not exist).
func (c *ownCatalog) load(ctx context.Context, ident table.Identifier) (*table.Table, bool, error) {
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
func (c *ownCatalog) create(ctx context.Context, ident table.Identifier, location string, sc *iceberg.Schema,
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
