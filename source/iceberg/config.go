package iceberg

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/job"
)

// Policies of on_rewrite: what a run does with a snapshot after the
// bookmark that removes or rewrites rows (an overwrite or a delete).
const (
	RewriteFail      = "fail"
	RewriteReprocess = "reprocess"
	RewriteIgnore    = "ignore"
)

// Config is an Iceberg source's block in the job file (a source with
// iceberg:).
type Config struct {
	Iceberg Target `yaml:"iceberg" doc:"required: the Iceberg table the source reads, snapshot by snapshot"`
	// OnRewrite is what an overwrite or delete snapshot after the
	// bookmark does.
	OnRewrite string `yaml:"on_rewrite" doc:"fail (default: the run fails naming the table and snapshot) | reprocess (read the whole table at its current snapshot again: rows read before are read again) | ignore (skip the snapshot: the rows it deleted stay downstream, the rows it added are not read); for overwrite and delete snapshots after the bookmark (replace snapshots, compactions, add no rows and are always skipped)"`
	// BoundedSnapshots limits the snapshots one run reads.
	BoundedSnapshots int64 `yaml:"bounded_snapshots" doc:"per-run limit of append snapshots read, oldest first; 0: none"`
}

// Target is the iceberg: block: the table, and the catalog that holds it.
type Target struct {
	// Table is NAMESPACE.TABLE.
	Table string `yaml:"table" doc:"required: DB.TABLE, the table's namespace and name in its catalog"`
	// Catalog is an external catalog; without it the table is in
	// tidemark's own catalog, in the job's state store.
	Catalog CatalogConfig `yaml:"catalog" doc:"an external catalog; without it the table is read from the state store's own SQL catalog (SQLite or PostgreSQL state), where Iceberg sinks keep theirs"`
}

// CatalogConfig is an external REST catalog (the block Iceberg sinks and
// sources share).
type CatalogConfig = icecatalog.REST

// ApplyDefaults fills the unset keys.
func (c *Config) ApplyDefaults(*job.Spec) {
	if c.OnRewrite == "" {
		c.OnRewrite = RewriteFail
	}
}

// Validate checks the block, every problem at its key, with no I/O.
func (c *Config) Validate(ck *job.Check) {
	if _, _, err := splitTable(c.Iceberg.Table); err != nil {
		ck.Fail("iceberg.table", "%v", err)
	}
	c.Iceberg.Catalog.Check(ck)
	ck.OneOf("on_rewrite", c.OnRewrite, []string{RewriteFail, RewriteReprocess, RewriteIgnore})
	if c.BoundedSnapshots < 0 {
		ck.Fail("bounded_snapshots", "must be 0 (no limit) or more")
	}
}

// Place is the table, named for lineage; the source reads no folder of its
// own (the table's files are wherever its metadata says).
func (c *Config) Place(*job.Spec) job.Place {
	return job.Place{Shown: "Iceberg table " + c.Iceberg.Table,
		Dataset: job.Dataset{Namespace: "iceberg", Name: c.Iceberg.Table, SourceName: "iceberg",
			URI: "iceberg:" + c.Iceberg.Table}}
}

// splitTable splits DB.TABLE into its namespace and name.
func splitTable(s string) (namespace, name string, err error) {
	ns, name, ok := strings.Cut(strings.TrimSpace(s), ".")
	switch {
	case s == "":
		return "", "", fmt.Errorf("is required: DB.TABLE")
	case !ok || !job.Identifier(ns) || !job.Identifier(name):
		return "", "", fmt.Errorf("%q: want DB.TABLE, each a name of letters, digits and _", s)
	}
	return ns, name, nil
}
