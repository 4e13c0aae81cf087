package files

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/glob"
	"github.com/tidemark-etl/tidemark/job"
)

// The defaults of a file source.
const (
	DefaultFormat         = "csv"
	DefaultTracking       = "exact"
	DefaultMaxBand        = 15 * time.Minute
	DefaultMaxFilesInBand = 1000
	DefaultOnModified     = "reprocess"
	DefaultListing        = "full"
)

// Allowed values of the enumerated keys.
var (
	Formats     = []string{"csv", "json", "parquet"}
	Trackings   = []string{"exact", "timestamp"}
	OnModifieds = []string{"reprocess", "ignore", "fail"}
	Listings    = []string{"full", "ordered"}
)

// Config is a file source's block in the job file: read a job's with
// src.Config.(*files.Config).
type Config struct {
	// Path is s3://..., file://... or a local path (relative to the job file).
	Path string `yaml:"path" doc:"required: a folder: s3://bucket/prefix/, file://..., or a plain path (relative to the job file)"`
	// Format is csv, json (JSON Lines) or parquet.
	Format string `yaml:"format" doc:"csv | json (JSON Lines) | parquet; .gz/.zst detected from the name"`
	// Options pass through to the reader (header, delim, ...).
	Options map[string]any `yaml:"options" doc:"passed to the engine's reader (DuckDB: read_csv / read_json / read_parquet options)"`
	// Include and Exclude are globs over keys relative to Path ("**" spans folders).
	Include []string `yaml:"include" doc:"optional globs over paths relative to path; ** spans folders"`
	Exclude []string `yaml:"exclude" doc:"optional globs, likewise, of files never read"`
	// Tracking is exact (default) or timestamp.
	Tracking string `yaml:"tracking" doc:"exact (every processed file's identity is recorded) | timestamp (Glue's model: last-modified high-water mark and band)"`
	// MaxBand is timestamp tracking's band (default 15m).
	MaxBand job.Duration `yaml:"max_band" doc:"timestamp tracking only: Glue's maxBand"`
	// MaxFilesInBand caps the files taken per run within the band (default 1000).
	MaxFilesInBand int `yaml:"max_files_in_band" doc:"timestamp tracking: Glue's maxFilesInBand; the overflow waits for the next run"`
	// BoundedFiles and BoundedSize limit one run's input, oldest first.
	BoundedFiles int      `yaml:"bounded_files" doc:"per-run limit, oldest first (mtime, then path); a run always reads at least one file; 0: none"`
	BoundedSize  job.Size `yaml:"bounded_size" doc:"per-run limit in bytes (e.g. 10GiB), likewise"`
	// OnModified is reprocess (default), ignore or fail.
	OnModified string `yaml:"on_modified" doc:"what a file whose identity changed since it was read does: reprocess | ignore | fail"`
	// OnBadRecord overrides the job's default.
	OnBadRecord string `yaml:"on_bad_record" doc:"fail | skip | quarantine; default: the job's on_bad_record"`
	// HivePartitioning turns key=value folders into columns (default true).
	HivePartitioning *bool `yaml:"hive_partitioning" doc:"key=value folders under path become columns"`
	// Listing is full (default) or ordered: for prefixes whose keys sort in
	// arrival order, list only after the last key recorded (S3 StartAfter).
	Listing string `yaml:"listing" doc:"full | ordered: for S3 prefixes whose keys sort in arrival order, list only after the last key recorded"`
	// S3 overrides the S3 settings for this source: endpoint, region,
	// path_style, profile (and tuning: max_attempts, part_size, ...).
	S3 map[string]string `yaml:"s3" doc:"S3 settings for this source: endpoint, region, path_style, profile, ... (see S3)"`
	// Catalog names a catalog table to read instead of Path, Format and
	// Options; PushDownPredicate prunes its partitions.
	Catalog           string `yaml:"catalog" doc:"DB.TABLE: read a catalog table (its location, format, options, columns and partitions) instead of path/format/options"`
	PushDownPredicate string `yaml:"push_down_predicate" doc:"catalog sources: a condition on partition keys (year >= '2026' AND product IN ('a', 'b')); only the partitions it keeps are listed"`
	// AllowMissing lets a local source folder not exist yet (a run then
	// reads nothing); without it a missing folder fails the run. On S3 it
	// silences the warning about a prefix that holds no object.
	AllowMissing bool `yaml:"allow_missing" doc:"true: a folder that does not exist yet is read as empty (otherwise the run fails, exit 1)"`
	// SchemaEvolution is what a file whose columns or types differ from
	// the recorded schema does: fail (default), add_new_columns, rescue
	// or none (see docs/how-to/schema-evolution.md).
	SchemaEvolution string `yaml:"schema_evolution" doc:"fail (a new column fails the run) | add_new_columns (new columns and widened types become a new schema version) | rescue (what does not fit goes to _rescued_data) | none (new columns ignored)"`
}

// ApplyDefaults fills the unset keys; on_bad_record comes from the job.
func (c *Config) ApplyDefaults(s *job.Spec) {
	if c.Format == "" && c.Catalog == "" {
		c.Format = DefaultFormat
	}
	c.Format = job.Format(c.Format) // jsonl, ndjson: json
	if c.Tracking == "" {
		c.Tracking = DefaultTracking
	}
	if c.MaxBand.Duration == 0 {
		c.MaxBand.Duration = DefaultMaxBand
	}
	if c.MaxFilesInBand == 0 {
		c.MaxFilesInBand = DefaultMaxFilesInBand
	}
	if c.OnModified == "" {
		c.OnModified = DefaultOnModified
	}
	if c.OnBadRecord == "" {
		c.OnBadRecord = s.OnBadRecord
	}
	if c.Listing == "" {
		c.Listing = DefaultListing
	}
	if c.SchemaEvolution == "" {
		c.SchemaEvolution = bookmark.EvolveFail
	}
	if c.HivePartitioning == nil {
		t := true
		c.HivePartitioning = &t
	}
}

// Validate checks the block, every problem at its key.
func (c *Config) Validate(ck *job.Check) {
	switch {
	case c.Catalog != "":
		c.validateCatalog(ck)
	case c.Path == "":
		ck.Fail("path", "is required (or catalog: DB.TABLE, or connection: and table: for a SQL table)")
	case c.PushDownPredicate != "":
		ck.Fail("push_down_predicate", "prunes a catalog table's partitions: it needs catalog: DB.TABLE instead of path:")
	}
	if c.Catalog == "" {
		ck.Location("path", c.Path)
		ck.OneOf("format", c.Format, Formats)
		ck.ReaderOptions(c.Format, c.Options)
	}
	ck.OneOf("tracking", c.Tracking, Trackings)
	ck.OneOf("on_modified", c.OnModified, OnModifieds)
	ck.OneOf("on_bad_record", c.OnBadRecord, job.OnBadRecords)
	ck.OneOf("listing", c.Listing, Listings)
	ck.OneOf("schema_evolution", c.SchemaEvolution, bookmark.SchemaEvolutions)
	if c.Listing == "ordered" && c.Tracking != "exact" {
		ck.Fail("listing", "ordered listing needs tracking: exact")
	}
	if c.Listing == "ordered" && job.IsLocal(c.Path) {
		ck.Fail("listing", "ordered listing is for S3 prefixes whose keys sort in arrival order; a local folder is always listed in full")
	}
	if c.MaxBand.IsSet() && c.Tracking != "timestamp" {
		ck.Fail("max_band", "is a setting of tracking: timestamp; this source has tracking: %s", c.Tracking)
	}
	ck.Positive("bounded_files", int64(c.BoundedFiles))
	ck.Duration("max_band", c.MaxBand)
	ck.Size("bounded_size", c.BoundedSize)
	ck.Positive("max_band", int64(c.MaxBand.Duration))
	ck.Positive("max_files_in_band", int64(c.MaxFilesInBand))
	for j, g := range append(slices.Clone(c.Include), c.Exclude...) {
		key := fmt.Sprintf("include[%d]", j)
		if j >= len(c.Include) {
			key = fmt.Sprintf("exclude[%d]", j-len(c.Include))
		}
		if _, err := filepath.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
			ck.Fail(key, "bad glob %q: %v", g, err)
		} else if err := glob.CheckRelative(c.Path, g); err != nil {
			ck.Fail(key, "%v", err)
		}
	}
	ck.S3(c.S3)
}

// RelativeGlob returns g relative to path when g is a full path under it
// ("s3://land/in/tmp/**" under "s3://land/in/" is "tmp/**"); any other g
// as it is.
func RelativeGlob(path, g string) string { return glob.Relative(path, g) }

// Place is the source's folder and S3 settings, named for lineage
// (job.Placer); none when it reads a catalog table (its location is known when it is read).
func (c *Config) Place(spec *job.Spec) job.Place {
	if c.Path == "" {
		return job.Place{}
	}
	return job.FolderPlace(spec, c.Path, c.S3)
}
