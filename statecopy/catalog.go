package statecopy

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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
// were. A table the destination has already at the same version (an
// earlier copy, made with another job) gains the partitions it lacks;
// any other table there is left as it is (named in Kept): a copy never
// changes what the destination's own jobs registered. Versions keep
// their numbers; the store stamps their times anew.
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
			cur, err := to.Table(ctx, t.Database, t.Name, 0)
			if err == nil {
				if !sameTable(cur, t) {
					sum.Kept = append(sum.Kept, name)
					continue
				}
				// An earlier copy of this table (a copy of another job):
				// it gains the partitions registered since.
				n, err := addMissingPartitions(ctx, from, to, t, &c)
				if err != nil {
					return sum, err
				}
				sum.Partitions += n
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
				sum.Partitions++
			}
			sum.Tables++
		}
	}
	if c.Empty() {
		return sum, nil
	}
	if err := to.ApplyCatalog(ctx, c); err != nil {
		return CatalogSummary{Kept: sum.Kept}, fmt.Errorf("writing the catalog into the destination: %w", err)
	}
	return sum, nil
}

// sameTable reports whether two readings of a table's current version are
// the same version (times aside).
func sameTable(a, b catalog.Table) bool {
	return reflect.DeepEqual(catalog.Normalized(a), catalog.Normalized(b))
}

// addMissingPartitions adds to c the partitions of table t in from that
// the destination lacks, and returns how many.
func addMissingPartitions(ctx context.Context, from, to catalog.Store, t catalog.Table, c *catalog.Changes) (int, error) {
	name := t.Database + "." + t.Name
	have := map[string]bool{}
	for p, err := range to.Partitions(ctx, t.Database, t.Name) {
		if err != nil {
			return 0, fmt.Errorf("reading the destination's partitions of catalog table %s: %w", name, err)
		}
		have[string(catalog.ValuesKey(p.Values))] = true
	}
	n := 0
	for p, err := range from.Partitions(ctx, t.Database, t.Name) {
		if err != nil {
			return 0, fmt.Errorf("reading the partitions of catalog table %s: %w", name, err)
		}
		if !have[string(catalog.ValuesKey(p.Values))] {
			c.Partitions = append(c.Partitions, p)
			n++
		}
	}
	return n, nil
}
