package spark

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/job"
)

// Options are the Spark engine's settings, the job file's
// engine: {spark: {...}} block.
type Options struct {
	Remote       string            `yaml:"remote" doc:"the Spark Connect server, sc://host:port (parameters after /; as pyspark takes them); default: the SPARK_REMOTE environment variable"`
	Conf         map[string]string `yaml:"conf" doc:"Spark session settings for the run, e.g. {spark.sql.shuffle.partitions: \"64\"}; no secrets (s3a credentials come from the AWS chain)"`
	QueryTimeout string            `yaml:"query_timeout" doc:"the longest one Spark statement may run, e.g. 30m; the run fails (nothing published) when one takes longer; default: no limit"`
	Staging      string            `yaml:"staging" doc:"a folder or s3:// prefix the cluster can read, where the run puts what tidemark extracts for Spark (SQL table sources); default: the system's temporary folder (a local server only)"`
}

var _ engine.Options = (*Options)(nil)

// ApplyDefaults resolves a relative staging folder against the job file's
// folder.
func (o *Options) ApplyDefaults(s *job.Spec) {
	if s != nil && s.Dir != "" && o.Staging != "" && engine.Scheme(o.Staging) == "file" {
		o.Staging = s.Resolve(o.Staging)
	}
}

// SpillFolder is where the run keeps its temporary files (the staging
// folder when it is local).
func (o *Options) SpillFolder() string {
	if o.Staging != "" && engine.Scheme(o.Staging) == "file" {
		return o.Staging
	}
	return ""
}

// Validate checks the job file's block, every problem at its key.
func (o *Options) Validate(ck *job.Check) {
	if o.Remote != "" {
		ck.NoSecret("remote", o.Remote, "pass a token through SPARK_REMOTE")
	}
	for k, v := range o.Conf {
		if secret.IsSecretKey(k) {
			ck.Fail("conf."+k, "a secret does not belong in the job file; s3a credentials come from the AWS chain (AWS_ACCESS_KEY_ID, ...)")
			continue
		}
		ck.NoSecret("conf."+k, v, "the AWS chain or SPARK_REMOTE")
		if k == "spark.sql.ansi.enabled" && !strings.EqualFold(strings.TrimSpace(v), "true") {
			ck.Fail("conf."+k, "Spark without ANSI mode changes values where the DuckDB engine fails: a cast that overflows wraps (CAST(500 AS TINYINT) is -12), a division by zero is NULL; leave it on and write try_cast or try_divide where NULL is meant")
		}
		if k == sessionTimeZone && !isUTC(v) {
			ck.Fail("conf."+k, "the session's time zone is UTC, as on the DuckDB engine: CSV and JSON sinks and partition folders write instants with +00, and times without an offset are read as UTC; got %q (convert in a transform instead: from_utc_timestamp(ts, 'Europe/Paris'))", v)
		}
	}
	if err := o.Check(); err != nil {
		ck.Fail("", "%v", err)
	}
}

// sessionTimeZone is the conf key of the session's time zone, which every
// run sets to UTC (sessionConf).
const sessionTimeZone = "spark.sql.session.timeZone"

// isUTC reports whether a spark.sql.session.timeZone value is UTC.
func isUTC(zone string) bool {
	switch strings.ToUpper(strings.TrimSpace(zone)) {
	case "UTC", "ETC/UTC", "GMT", "ETC/GMT", "Z", "+00:00", "UTC+00:00", "GMT+00:00":
		return true
	}
	return false
}

// Check reports the first bad setting, naming its key.
func (o *Options) Check() error {
	if o.Remote != "" && !strings.HasPrefix(o.Remote, "sc://") {
		return fmt.Errorf("remote: want sc://host:port, got %q", secret.Redact(o.Remote))
	}
	if _, err := o.timeout(); err != nil {
		return err
	}
	for k := range o.Conf {
		if k == "" || strings.ContainsAny(k, " \t\r\n") {
			return fmt.Errorf("conf: %q is not a setting name", k)
		}
	}
	return nil
}

func (o *Options) timeout() (time.Duration, error) {
	if o.QueryTimeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(o.QueryTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("query_timeout: want a positive duration such as 30m, got %q", o.QueryTimeout)
	}
	return d, nil
}

// remote is the server to use: the block's, else SPARK_REMOTE.
func (o *Options) remote() (string, error) {
	if o.Remote != "" {
		return o.Remote, nil
	}
	if r := os.Getenv("SPARK_REMOTE"); r != "" {
		return r, nil
	}
	return "", fmt.Errorf("engine spark: no server: set engine: {spark: {remote: sc://host:15002}} or SPARK_REMOTE")
}
