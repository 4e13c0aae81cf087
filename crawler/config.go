package crawler

import (
	"fmt"
	"os"
	"regexp"

	"github.com/tidemark-etl/tidemark/internal/glob"
	"github.com/tidemark-etl/tidemark/job"
)

func init() {
	job.RegisterCrawler(job.Kind{Name: "crawler", Noun: "crawler", New: func() job.Config { return new(Config) }})
}

// The defaults of a crawler file. A Glue crawler reads the start of each
// file it classifies (its built-in classifiers look at the first
// megabyte); it samples every file unless told a number per folder (1 to
// 249). tidemark samples a few files per folder by default, spread over
// the folder's key order, so that a crawl of a large prefix stays cheap.
const (
	DefaultSampleFiles = 10
	DefaultSampleBytes = 1 << 20
	DefaultMaxTables   = 100
	DefaultRecrawl     = "everything"
	DefaultUpdate      = "update"
	DefaultDelete      = "deprecate"
)

// Allowed values of the enumerated keys.
var (
	Recrawls = []string{"everything", "new_folders_only", "new_files_only"}
	Updates  = []string{"update", "log"}
	Deletes  = []string{"deprecate", "delete", "log"}
)

// Config is a crawler file, or a job file's crawler: block.
type Config struct {
	// Name is the crawler's name; its bookmark is kept as the job
	// "crawler:NAME".
	Name string `yaml:"crawler" doc:"required in a crawler file (in a job file: the job's name); its bookmark is kept as the job crawler:NAME"`
	// State is the state store location, as for jobs.
	State string `yaml:"state" doc:"state store, as a job's state: (in a job file: the job's state, not given here)"`
	// Database is the catalog database the tables go to.
	Database string `yaml:"database" doc:"required: the catalog database the tables are registered in"`
	// Targets are the folders crawled.
	Targets []Target `yaml:"targets" doc:"required: the folders crawled, each {path, exclude, s3, table}"`
	// TableLevel is the folder depth below a target that is one table.
	TableLevel int `yaml:"table_level" doc:"the folder depth below a target that is one table; 0: the target itself"`
	// SampleFiles is how many files of each folder are opened.
	SampleFiles int `yaml:"sample_files" doc:"files opened per folder, spread over the folder's key order (first and last included)"`
	// SampleBytes is how much of each sampled file is read.
	SampleBytes job.Size `yaml:"sample_bytes" doc:"bytes read from the start of each sampled file (after decompression; a Parquet file's footer instead)"`
	// CombineCompatibleSchemas merges the columns of a table's folders
	// that have the same format; false splits folders whose columns differ
	// into tables of their own.
	CombineCompatibleSchemas *bool `yaml:"combine_compatible_schemas" doc:"true: one table per table folder, its folders' columns merged; false: folders whose column names differ become tables of their own"`
	// MaxTables fails the crawl when it would make more tables.
	MaxTables int `yaml:"max_tables" doc:"the crawl fails (exit 1, nothing registered) rather than make more tables than this"`
	// Recrawl is everything, new_folders_only or new_files_only.
	Recrawl string `yaml:"recrawl" doc:"everything | new_folders_only | new_files_only: which files are opened, by the crawler's own bookmark"`
	// SchemaChangePolicy is Glue's UpdateBehavior and DeleteBehavior.
	SchemaChangePolicy Policy `yaml:"schema_change_policy" doc:"what a change does to an existing table"`

	// dir is the folder relative paths resolve against.
	dir string
	// inJob is set for a job file's crawler: block.
	inJob bool
}

// Target is one folder a crawler crawls.
type Target struct {
	// Path is s3://bucket/prefix/, file://... or a local path.
	Path string `yaml:"path" doc:"required: s3://bucket/prefix/, file://... or a local folder (relative to the file)"`
	// Exclude are globs over keys relative to Path ("**" spans folders).
	Exclude []string `yaml:"exclude" doc:"globs over paths relative to path of files never looked at; ** spans folders"`
	// S3 overrides the S3 settings (endpoint, region, path_style, profile).
	S3 map[string]string `yaml:"s3" doc:"S3 settings for this target, as a source's s3:"`
	// Table names the table at the target itself (table_level 0), instead
	// of the target folder's name.
	Table string `yaml:"table" doc:"the name of the table at the target (table_level 0 only); default the target folder's name"`
}

// Policy is the schema change policy.
type Policy struct {
	// Update is update (write a new table version) or log.
	Update string `yaml:"update" doc:"update: a changed table gets a new version | log: the change is only reported"`
	// Delete is deprecate, delete or log.
	Delete string `yaml:"delete" doc:"deprecate: a table or partition whose files are gone is marked deprecated | delete: it is dropped | log: reported only"`
}

// Combine reports whether compatible schemas are combined.
func (c *Config) Combine() bool {
	return c.CombineCompatibleSchemas == nil || *c.CombineCompatibleSchemas
}

// ApplyDefaults fills the unset keys; in a job file the crawler is named
// after the job.
func (c *Config) ApplyDefaults(s *job.Spec) {
	c.dir = s.Dir
	c.inJob = s.Job != ""
	if c.Name == "" && c.inJob {
		c.Name = s.Job
	}
	if c.SampleFiles == 0 {
		c.SampleFiles = DefaultSampleFiles
	}
	if c.SampleBytes.Bytes == 0 {
		c.SampleBytes.Bytes = DefaultSampleBytes
	}
	if c.CombineCompatibleSchemas == nil {
		t := true
		c.CombineCompatibleSchemas = &t
	}
	if c.MaxTables == 0 {
		c.MaxTables = DefaultMaxTables
	}
	if c.Recrawl == "" {
		c.Recrawl = DefaultRecrawl
	}
	if c.SchemaChangePolicy.Update == "" {
		c.SchemaChangePolicy.Update = DefaultUpdate
	}
	if c.SchemaChangePolicy.Delete == "" {
		c.SchemaChangePolicy.Delete = DefaultDelete
	}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// identRE is a catalog database name: a SQL identifier.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports every problem of the crawler, each at its key.
func (c *Config) Validate(ck *job.Check) {
	switch {
	case c.Name == "":
		ck.Fail("crawler", "is required")
	case !nameRE.MatchString(c.Name):
		ck.Fail("crawler", "%q: use letters, digits, '_', '-' and '.'", c.Name)
	}
	if c.inJob && c.State != "" {
		ck.Fail("state", "a job's crawler uses the job's state store: give state: at the top of the job file")
	}
	ck.NoSecret("state", c.State, "credentials come from the environment, never from the state location")
	switch {
	case c.Database == "":
		ck.Fail("database", "is required")
	case !identRE.MatchString(c.Database):
		ck.Fail("database", "%q must be an identifier (letters, digits, '_')", c.Database)
	}
	if len(c.Targets) == 0 {
		ck.Fail("targets", "at least one target is required")
	}
	for i, t := range c.Targets {
		p := fmt.Sprintf("targets[%d]", i)
		if t.Path == "" {
			ck.Fail(p+".path", "is required")
		} else {
			ck.Location(p+".path", t.Path)
		}
		for j, g := range t.Exclude {
			if _, err := glob.Compile(g); err != nil {
				ck.Fail(fmt.Sprintf("%s.exclude[%d]", p, j), "%v", err)
			} else if err := glob.CheckRelative(t.Path, g); err != nil {
				ck.Fail(fmt.Sprintf("%s.exclude[%d]", p, j), "%v", err)
			}
		}
		if len(t.S3) > 0 {
			ck.S3Settings(p, t.S3)
		}
		switch {
		case t.Table == "":
		case !identRE.MatchString(t.Table):
			ck.Fail(p+".table", "%q must be an identifier (letters, digits, '_')", t.Table)
		case c.TableLevel != 0:
			ck.Fail(p+".table", "names the table at the target itself, so table_level must be 0 (it is %d)", c.TableLevel)
		}
	}
	if c.TableLevel < 0 {
		ck.Fail("table_level", "must be 0 or more")
	}
	if c.SampleFiles < 0 {
		ck.Fail("sample_files", "must be 1 or more")
	}
	ck.Size("sample_bytes", c.SampleBytes)
	if c.SampleBytes.Bytes > 0 && c.SampleBytes.Bytes < 1024 {
		ck.Fail("sample_bytes", "must be at least 1KiB")
	}
	if c.MaxTables < 0 {
		ck.Fail("max_tables", "must be 1 or more")
	}
	ck.OneOf("recrawl", c.Recrawl, Recrawls)
	ck.OneOf("schema_change_policy.update", c.SchemaChangePolicy.Update, Updates)
	ck.OneOf("schema_change_policy.delete", c.SchemaChangePolicy.Delete, Deletes)
}

// Load reads, parses and validates a crawler file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, job.Errors{{File: path, Msg: fmt.Sprintf("reading crawler file: %v", err)}}
	}
	return Parse(path, data)
}

// Parse parses and validates crawler-file bytes; name is used in messages
// and to resolve relative paths.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{}
	if _, err := job.ParseDocument(name, data, c); err != nil {
		return nil, err
	}
	return c, nil
}

// Job is the name the crawler's bookmark and runs are kept under.
func (c *Config) Job() string { return JobOf(c.Name) }

// JobOf is the state store's job name of the crawler named name (a job's
// crawler is named after the job).
func JobOf(name string) string { return "crawler:" + name }

// Location returns a target's path as a location: URLs as they are, local
// paths absolute against the crawler file's folder.
func (c *Config) Location(t Target) string {
	s := &job.Spec{Dir: c.dir}
	return s.Resolve(t.Path)
}

// StateLocation is the crawler's state: key resolved against its file's
// folder ("" when not given).
func (c *Config) StateLocation() string {
	if c.State == "" {
		return ""
	}
	return c.Location(Target{Path: c.State})
}
