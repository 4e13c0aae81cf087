package tidemark

import (
	"context"
	"fmt"
	"iter"

	"github.com/tidemark-etl/tidemark/catalog"
)

// The catalog of a state store that does not exist yet: empty.

func (noState) ApplyCatalog(context.Context, catalog.Changes) error     { return errNoStateWrite }
func (noState) Databases(context.Context) ([]catalog.Database, error)   { return nil, nil }
func (noState) Tables(context.Context, string) ([]catalog.Table, error) { return nil, nil }
func (noState) TableVersions(context.Context, string, string) ([]catalog.Table, error) {
	return nil, nil
}
func (noState) Table(_ context.Context, database, name string, _ int64) (catalog.Table, error) {
	return catalog.Table{}, fmt.Errorf("table %s.%s (no state store yet): %w", database, name, catalog.ErrNotFound)
}
func (noState) Partitions(context.Context, string, string) iter.Seq2[catalog.Partition, error] {
	return func(func(catalog.Partition, error) bool) {}
}
