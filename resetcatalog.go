package tidemark

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// dropEmptied drops the catalog partitions whose location is one of the
// folders a purge left without files (sink.Purged.Emptied), so that the
// catalog stays in step with the files after a reset with --purge-output.
// Partitions elsewhere, and every table, are left as they are.
func dropEmptied(ctx context.Context, st store.Store, emptied map[string]bool, res *ResetResult, log *slog.Logger) error {
	if len(emptied) == 0 {
		return nil
	}
	dbs, err := st.Databases(ctx)
	if err != nil {
		return fmt.Errorf("reading the catalog after the purge: %w", err)
	}
	var c catalog.Changes
	var dropped []string
	for _, d := range dbs {
		tables, err := st.Tables(ctx, d.Name)
		if err != nil {
			return fmt.Errorf("reading the catalog after the purge: %w", err)
		}
		for _, t := range tables {
			for p, err := range st.Partitions(ctx, t.Database, t.Name) {
				if err != nil {
					return fmt.Errorf("reading the catalog after the purge: %w", err)
				}
				if !emptied[p.Location] {
					continue
				}
				c.DropPartitions = append(c.DropPartitions, catalog.PartitionRef{Database: p.Database, Table: p.Table, Values: p.Values})
				dropped = append(dropped, partitionName(t, p))
			}
		}
	}
	if c.Empty() {
		return nil
	}
	if err := st.ApplyCatalog(ctx, c); err != nil {
		return fmt.Errorf("dropping the catalog partitions the purge emptied: %w", err)
	}
	res.CatalogDropped = append(res.CatalogDropped, dropped...)
	log.Info("dropped the catalog partitions the purge emptied", "partitions", len(dropped),
		"examples", strings.Join(dropped[:min(len(dropped), maxNamed)], ", "))
	return nil
}

// partitionName is DB.TABLE/key=value/... for messages.
func partitionName(t catalog.Table, p catalog.Partition) string {
	parts := []string{t.Database + "." + t.Name}
	for i, v := range p.Values {
		if i < len(t.PartitionKeys) {
			parts = append(parts, t.PartitionKeys[i].Name+"="+v)
		}
	}
	return strings.Join(parts, "/")
}
