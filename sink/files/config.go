package files

import (
	"fmt"

	"github.com/tidemark-etl/tidemark/job"
)

// The defaults of a file sink.
const (
	DefaultFormat = "parquet"
	DefaultMode   = "append"
)

// Allowed values of the enumerated keys.
var (
	Formats = []string{"parquet", "csv", "json"}
	Modes   = []string{"append", "overwrite", "overwrite_partitions"}
)

// Config is a file sink's block in the job file: read a job's with
// k.Config.(*files.Config). A sink's ctx and from: are job.Sink's.
type Config struct {
	// Path is s3://..., file://... or a local path (relative to the job file).
	Path string `yaml:"path" doc:"required: the sink's folder: s3://bucket/prefix/, file://..., or a plain path (relative to the job file)"`
	// Format is parquet (default), csv or json.
	Format string `yaml:"format" doc:"parquet (snappy) | csv | json (JSON Lines)"`
	// Options pass through to the writer (compression, ...).
	Options map[string]any `yaml:"options" doc:"writer options (compression, row_group_size, ...)"`
	// PartitionBy are the columns whose values name key=value folders.
	PartitionBy []string `yaml:"partition_by" doc:"columns whose values name key=value folders"`
	// Mode is append (default), overwrite or overwrite_partitions.
	Mode string `yaml:"mode" doc:"append | overwrite | overwrite_partitions (replaces the partitions a run writes)"`
	// S3 overrides the S3 settings for this sink, as for sources.
	S3 map[string]string `yaml:"s3" doc:"S3 settings for this sink, as for sources"`
	// Catalog registers the sink's table in the data catalog.
	Catalog CatalogTarget `yaml:"catalog" doc:"the catalog table the sink keeps in step with its files"`
}

// CatalogTarget is a file sink's catalog: block (Glue's enableUpdateCatalog
// with partitionKeys): the table the sink's folder is.
type CatalogTarget struct {
	Table  string `yaml:"table" doc:"DB.TABLE: the catalog table the sink's folder is"`
	Update bool   `yaml:"update" doc:"true: the run's commit creates the table from the output's schema when it is missing, adds new columns as a new table version and registers the partitions written (a reset with --purge-output drops those it empties)"`
}

// ApplyDefaults fills the unset keys.
func (c *Config) ApplyDefaults(*job.Spec) {
	if c.Format == "" {
		c.Format = DefaultFormat
	}
	c.Format = job.Format(c.Format) // jsonl, ndjson: json
	if c.Mode == "" {
		c.Mode = DefaultMode
	}
}

// Validate checks the block, every problem at its key.
func (c *Config) Validate(ck *job.Check) {
	if c.Path == "" {
		ck.Fail("path", "is required (or connection: and table: for a SQL table)")
	}
	ck.Location("path", c.Path)
	ck.OneOf("format", c.Format, Formats)
	ck.OneOf("mode", c.Mode, Modes)
	if c.Mode == "overwrite_partitions" && len(c.PartitionBy) == 0 {
		ck.Fail("mode", "overwrite_partitions needs partition_by")
	}
	for j, col := range c.PartitionBy {
		if !job.Identifier(col) {
			ck.Fail(fmt.Sprintf("partition_by[%d]", j), "%q must be a column name", col)
		}
	}
	ck.WriterOptions(c.Format, c.Options)
	ck.S3(c.S3)
	c.validateCatalog(ck)
}

// Place is the sink's folder and S3 settings, named for lineage
// (job.Placer); none when it has no path.
func (c *Config) Place(spec *job.Spec) job.Place {
	if c.Path == "" {
		return job.Place{}
	}
	return job.FolderPlace(spec, c.Path, c.S3)
}
