package statecopy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tidemark-etl/tidemark/catalog"
)

// CatalogSummary is what CopyCatalog moved.
type CatalogSummary struct {
	Tables     int `json:"tables"`
	Partitions int `json:"partitions"`
	// Kept are the tables (DB.TABLE) the destination had already: left as
	// they are.
	Kept []string `json:"kept,omitempty"`
}

// CopyCatalog copies the catalog — every database, every table with all
// its versions, every partition — from one store to another in one
// atomic change, so that the sinks that register partitions and the
// sources that read tables by name go on in the destination as they
// were. A table the destination has already is left as it is (named in
// Kept): a copy never changes what the destination's own jobs registered.
// Versions keep their numbers; the store stamps their times anew.
func CopyCatalog(ctx context.Context, from, to catalog.Store) (CatalogSummary, error) {
	var sum CatalogSummary
	dbs, err := from.Databases(ctx)
	if err != nil {
		return sum, fmt.Errorf("reading the source's catalog databases: %w", err)
	}
	var c catalog.Changes
	for _, db := range dbs {
		c.Databases = append(c.Databases, db)
		tables, err := from.Tables(ctx, db.Name)
		if err != nil {
			return sum, fmt.Errorf("reading the source's catalog tables of %s: %w", db.Name, err)
		}
		for _, t := range tables {
			name := t.Database + "." + t.Name
			_, err := to.Table(ctx, t.Database, t.Name, 0)
			if err == nil {
				sum.Kept = append(sum.Kept, name)
				continue
			}
			if !errors.Is(err, catalog.ErrNotFound) {
				return sum, fmt.Errorf("reading the destination's catalog table %s: %w", name, err)
			}
			versions, err := from.TableVersions(ctx, t.Database, t.Name)
			if err != nil {
				return sum, fmt.Errorf("reading the versions of catalog table %s: %w", name, err)
			}
			slices.Reverse(versions) // oldest first, each the base of the next
			for i, v := range versions {
				c.Tables = append(c.Tables, catalog.TableChange{Table: v, Base: int64(i)})
			}
			for p, err := range from.Partitions(ctx, t.Database, t.Name) {
				if err != nil {
					return sum, fmt.Errorf("reading the partitions of catalog table %s: %w", name, err)
				}
				c.Partitions = append(c.Partitions, p)
			}
			sum.Tables++
		}
	}
	sum.Partitions = len(c.Partitions)
	if c.Empty() {
		return sum, nil
	}
	if err := to.ApplyCatalog(ctx, c); err != nil {
		return CatalogSummary{Kept: sum.Kept}, fmt.Errorf("writing the catalog into the destination: %w", err)
	}
	return sum, nil
}
