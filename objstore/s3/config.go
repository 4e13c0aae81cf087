package s3

import (
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/internal/secret"
)

// Limits and defaults.
const (
	minPartSize         = 5 << 20  // S3's smallest part but the last
	maxParts            = 10000    // S3's most parts in one upload
	maxCopySize         = 5 << 30  // S3's largest single CopyObject
	defaultCopyPartSize = 1 << 30  // server-side copy parts move no bytes through us
	defaultPartSize     = 16 << 20 // memory per in-flight part
)

// Config is one store's settings. The zero value of every optional field
// means "the SDK's standard chain or tidemark's default".
type Config struct {
	// Bucket and Prefix locate the store: s3://Bucket/Prefix. Prefix is ""
	// or ends with '/'.
	Bucket string
	Prefix string

	// Endpoint is a custom S3-compatible endpoint URL (option "endpoint").
	// Default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's
	// endpoint_url; else AWS.
	Endpoint string
	// Region signs requests (option "region"). Default: AWS_REGION or the
	// profile's region; "us-east-1" when a custom endpoint is set.
	Region string
	// PathStyle forces path-style (true) or virtual-hosted (false)
	// addressing (option "path_style"). Default: path-style exactly when a
	// custom endpoint is set.
	PathStyle *bool
	// Profile is the shared-config profile (option "profile"). Default:
	// AWS_PROFILE, else "default".
	Profile string
	// Credentials, when set, replaces the credential chain (for programs and
	// tests; the job file has no way to set it).
	Credentials aws.CredentialsProvider
	// Logger receives the SDK's own messages at debug level (nil: dropped).
	Logger *slog.Logger

	// MaxAttempts is how many times one request is tried before its error
	// is returned (option "max_attempts", default 8).
	MaxAttempts int
	// MaxBackoff caps the jittered exponential backoff between attempts
	// (option "max_backoff", default 20s).
	MaxBackoff time.Duration
	// ReadTimeout fails an attempt whose connection delivers no byte for
	// this long, so it can be retried (option "read_timeout", default 1m).
	ReadTimeout time.Duration
	// PartSize is the multipart upload part size (option "part_size", at
	// least 5MiB, default 16MiB); bodies up to one part are sent in one
	// PutObject.
	PartSize int64
	// Concurrency is how many parts of one upload or copy are in flight
	// (option "concurrency", default 4). Memory per upload is about
	// (Concurrency+1)*PartSize.
	Concurrency int
	// ListPageSize is the number of keys per ListObjectsV2 page (option
	// "list_page_size", 1..1000, default 1000).
	ListPageSize int
}

// String shows the settings without the credentials, so a Config can be
// logged.
func (c Config) String() string {
	ps := "auto"
	if c.PathStyle != nil {
		ps = strconv.FormatBool(*c.PathStyle)
	}
	creds := "chain"
	if c.Credentials != nil {
		creds = "given"
	}
	return fmt.Sprintf("s3://%s/%s endpoint=%q region=%q path_style=%s profile=%q credentials=%s max_attempts=%d part_size=%d concurrency=%d",
		c.Bucket, c.Prefix, c.Endpoint, c.Region, ps, c.Profile, creds, c.MaxAttempts, c.PartSize, c.Concurrency)
}

// options maps each option name to its parser.
var options = map[string]func(c *Config, v string) error{
	"endpoint": func(c *Config, v string) error { c.Endpoint = v; return nil },
	"region":   func(c *Config, v string) error { c.Region = v; return nil },
	"profile":  func(c *Config, v string) error { c.Profile = v; return nil },
	"path_style": func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		c.PathStyle = &b
		return err
	},
	"max_attempts": func(c *Config, v string) (err error) { c.MaxAttempts, err = strconv.Atoi(v); return err },
	"max_backoff":  func(c *Config, v string) (err error) { c.MaxBackoff, err = time.ParseDuration(v); return err },
	"read_timeout": func(c *Config, v string) (err error) { c.ReadTimeout, err = time.ParseDuration(v); return err },
	"part_size": func(c *Config, v string) error {
		n, err := humanize.ParseBytes(v)
		c.PartSize = int64(n)
		return err
	},
	"concurrency":    func(c *Config, v string) (err error) { c.Concurrency, err = strconv.Atoi(v); return err },
	"list_page_size": func(c *Config, v string) (err error) { c.ListPageSize, err = strconv.Atoi(v); return err },
}

// OptionNames lists the options ParseOptions accepts.
func OptionNames() []string {
	names := make([]string, 0, len(options))
	for k := range options {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// CheckOption checks one option without opening a store.
func CheckOption(name, value string) error {
	parse, ok := options[name]
	if !ok {
		return fmt.Errorf("unknown s3 option %q (known: %s)", name, strings.Join(OptionNames(), ", "))
	}
	c := Config{Bucket: "check"}
	if err := parse(&c, value); err != nil {
		return fmt.Errorf("s3 option %s: %w", name, err)
	}
	return c.Validate()
}

// ParseOptions builds a Config from an s3://bucket/prefix location and a
// store's options. Unknown options are errors.
func ParseOptions(location string, opts map[string]string) (Config, error) {
	var c Config
	rest, ok := strings.CutPrefix(location, "s3://")
	if !ok {
		return c, fmt.Errorf("opening %s: not an s3:// location", location)
	}
	if found, masked := secret.Find(location); len(found) > 0 {
		return c, fmt.Errorf("s3 location %s holds a secret (%s): credentials come from the AWS chain, never from the location", masked, secret.Describe(found))
	}
	c.Bucket, c.Prefix, _ = strings.Cut(rest, "/")
	c.Prefix = strings.TrimLeft(c.Prefix, "/")
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names) // report the first bad option deterministically
	for _, k := range names {
		parse, ok := options[k]
		if !ok {
			return c, fmt.Errorf("opening %s: unknown s3 option %q (known: %s)", location, k, strings.Join(OptionNames(), ", "))
		}
		if err := parse(&c, opts[k]); err != nil {
			return c, fmt.Errorf("opening %s: s3 option %s: %w", location, k, err)
		}
	}
	return c, c.Validate()
}

// Validate checks the settings; errors name the option.
func (c Config) Validate() error {
	switch {
	case c.Bucket == "":
		return fmt.Errorf("s3 location has no bucket (want s3://bucket/prefix)")
	case c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/"):
		return fmt.Errorf("s3://%s/%s: prefix must end with '/'", c.Bucket, c.Prefix)
	case c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://"):
		return fmt.Errorf("s3 option endpoint: %q is not an http:// or https:// URL", c.Endpoint)
	case c.MaxAttempts < 0:
		return fmt.Errorf("s3 option max_attempts: must be at least 1")
	case c.MaxBackoff < 0:
		return fmt.Errorf("s3 option max_backoff: must not be negative")
	case c.ReadTimeout < 0:
		return fmt.Errorf("s3 option read_timeout: must not be negative")
	case c.PartSize != 0 && c.PartSize < minPartSize:
		return fmt.Errorf("s3 option part_size: %s is below S3's minimum of 5MiB", humanize.IBytes(uint64(c.PartSize)))
	case c.PartSize > maxCopySize:
		return fmt.Errorf("s3 option part_size: %s is above S3's maximum of 5GiB", humanize.IBytes(uint64(c.PartSize)))
	case c.Concurrency < 0:
		return fmt.Errorf("s3 option concurrency: must be at least 1")
	case c.ListPageSize < 0 || c.ListPageSize > 1000:
		return fmt.Errorf("s3 option list_page_size: must be between 1 and 1000")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 8
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 20 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = time.Minute
	}
	if c.PartSize == 0 {
		c.PartSize = defaultPartSize
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	if c.ListPageSize == 0 {
		c.ListPageSize = 1000
	}
	return c
}
