package iceberg

import (
	"context"
	"errors"
	"fmt"
	"strings"

	iceberg "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/manifest"
)

// CatalogName is the name tidemark's own catalog has in its SQL tables
// (their catalog_name column): pyiceberg's SqlCatalog("tidemark", uri=...)
// and Iceberg's JDBC catalog named tidemark read it.
const CatalogName = icecatalog.Name

// ErrNoOwnCatalog refuses an Iceberg sink without catalog: whose state
// store cannot hold a catalog (S3 or memory state).
var ErrNoOwnCatalog = icecatalog.ErrNoOwnCatalog

// tableCatalog is the catalog an Iceberg sink's table is kept in:
// tidemark's own catalog in the state store's database, or a REST catalog
// (catalog: {rest: ...}); see icecatalog.Catalog.
type tableCatalog struct {
	*icecatalog.Catalog
}

// openCatalog opens the catalog of target: a REST catalog when
// target.Catalog says so (its credential variable PasswordEnv), else the
// own catalog in the state store at target.Connection (a store.Identity's
// Location), whose tables are created when missing.
func openCatalog(ctx context.Context, target manifest.Table) (*tableCatalog, error) {
	var c *icecatalog.Catalog
	var err error
	if target.Catalog == manifest.CatalogREST {
		c, err = icecatalog.OpenREST(ctx, icecatalog.REST{URI: target.Connection, Warehouse: target.Warehouse,
			CredentialEnv: target.PasswordEnv})
	} else {
		c, err = icecatalog.Open(ctx, target.Connection)
	}
	if err != nil {
		return nil, err
	}
	return &tableCatalog{Catalog: c}, nil
}

// stateDialect is the SQL dialect of the state store at location, or
// ErrNoOwnCatalog for a store that holds no SQL database (S3, memory).
func stateDialect(location string) (sqlcat.SupportedDialect, error) {
	d, err := icecatalog.Dialect(location)
	if err != nil {
		return "", fmt.Errorf("%w (or keep the table in a REST catalog: iceberg: {catalog: {rest: URL}})", err)
	}
	return d, nil
}

// load loads the table (ok false: it does not exist).
func (c *tableCatalog) load(ctx context.Context, ident table.Identifier) (*table.Table, bool, error) {
	return c.Load(ctx, ident)
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
