package iceberg

import (
	"fmt"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
)

// The modes of an Iceberg sink; DefaultMode when none is given.
var Modes = []string{"append", "overwrite", "overwrite_partitions", "merge"}

// DefaultMode is the mode of a sink that names none.
const DefaultMode = "append"

// Config is an Iceberg sink's block in the job file (a sink with
// iceberg:): read a job's with k.Config.(*iceberg.Config). A sink's ctx and
// from: are job.Sink's.
type Config struct {
	Iceberg Target `yaml:"iceberg" doc:"required: the Iceberg table the sink commits its runs to"`
	// Path is where a new table's data and metadata go.
	Path string `yaml:"path" doc:"required: the table's folder (data/ and metadata/ go there): a plain local path or file://"`
	// Mode is append (default) or overwrite.
	Mode string `yaml:"mode" doc:"append (each run adds its files in one snapshot) | overwrite (each run's snapshot replaces every data file of the table) | overwrite_partitions (each run's snapshot replaces the data files of the partitions the run writes, keeps the others) | merge (replaces the rows whose merge_keys the run has, copy-on-write)"`
	// MergeKeys are the keys of mode merge.
	MergeKeys []string `yaml:"merge_keys" doc:"the columns mode merge matches rows on"`
	// PartitionBy is the table's partition spec.
	PartitionBy []string `yaml:"partition_by" doc:"the new table's partition spec: columns and Iceberg transforms year(c), month(c), day(c), hour(c), bucket(N, c), truncate(W, c); an existing table with another spec is refused"`
}

// Target is the iceberg: block: the table, and the catalog that holds it.
type Target struct {
	// Table is NAMESPACE.TABLE.
	Table string `yaml:"table" doc:"required: DB.TABLE, the table's namespace and name in its catalog"`
	// Catalog is an external catalog; without it the table lives in
	// tidemark's own catalog, in the job's state store.
	Catalog CatalogConfig `yaml:"catalog" doc:"an external catalog; without it the table is kept in the state store's own SQL catalog (SQLite or PostgreSQL state)"`
}

// CatalogConfig is an external REST catalog (the block Iceberg sinks and
// sources share).
type CatalogConfig = icecatalog.REST

// ApplyDefaults fills the unset keys.
func (c *Config) ApplyDefaults(*job.Spec) {
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
	c.PartitionBy = rejoin(c.PartitionBy)
}

// rejoin puts back together the transforms a YAML flow sequence split at
// their comma: [bucket(16, id)] reads as "bucket(16" and "id)".
func rejoin(items []string) []string {
	var out []string
	open := false
	for _, s := range items {
		if open {
			out[len(out)-1] += ", " + strings.TrimSpace(s)
		} else {
			out = append(out, s)
		}
		last := out[len(out)-1]
		open = strings.Count(last, "(") > strings.Count(last, ")")
	}
	return out
}

// Validate checks the block, every problem at its key, with no I/O.
func (c *Config) Validate(ck *job.Check) {
	if _, _, err := splitTable(c.Iceberg.Table); err != nil {
		ck.Fail("iceberg.table", "%v", err)
	}
	c.Iceberg.Catalog.Check(ck)
	if c.Path == "" {
		ck.Fail("path", "is required with iceberg: (the table's data and metadata go there)")
	} else if !objstore.IsLocal(c.Path) {
		ck.Fail("path", "%q: an Iceberg table's path is a local folder in this build (S3 is not supported yet)", c.Path)
	}
	ck.Location("path", c.Path)
	ck.OneOf("mode", c.Mode, Modes)
	switch {
	case c.Mode == "merge" && len(c.MergeKeys) == 0:
		ck.Fail("merge_keys", "mode merge needs merge_keys")
	case c.Mode != "merge" && len(c.MergeKeys) > 0:
		ck.Fail("merge_keys", "is only for mode merge (the mode is %s)", c.Mode)
	}
	for j, k := range c.MergeKeys {
		if !job.Identifier(k) {
			ck.Fail(fmt.Sprintf("merge_keys[%d]", j), "%q must be a column name", k)
		}
	}
	seen := map[string]int{}
	for j, p := range c.PartitionBy {
		f, err := parsePartition(p)
		if err != nil {
			ck.Fail(fmt.Sprintf("partition_by[%d]", j), "%v", err)
			continue
		}
		if i, dup := seen[f.Name]; dup {
			ck.Fail(fmt.Sprintf("partition_by[%d]", j), "%q repeats partition_by[%d]", p, i)
		}
		seen[f.Name] = j
	}
}

// Place is the table's folder, which no source, state or other sink may
// overlap, named for lineage as a folder.
func (c *Config) Place(spec *job.Spec) job.Place {
	if c.Path == "" {
		return job.Place{}
	}
	return job.FolderPlace(spec, c.Path, nil)
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
