// Package s3 is the object store for S3 and S3-compatible services
// (s3://bucket/prefix), on aws-sdk-go-v2.
//
// Credentials, region and endpoint come from the standard AWS chain:
// environment (AWS_ACCESS_KEY_ID, AWS_REGION, AWS_ENDPOINT_URL,
// AWS_ENDPOINT_URL_S3, ...), shared config and profiles, web identity and
// instance roles. A store's options (Config) override the region, endpoint
// and profile, so one job can read from one service and write to another.
// A custom endpoint implies path-style addressing unless path_style says
// otherwise.
//
// Every request is retried by the SDK's standard retryer (exponential
// backoff with jitter) on throttling, 5xx answers, timeouts and connection
// resets; permanent errors (403, missing bucket, wrong region) fail at once.
// Errors are *Error values that name the operation, bucket, key, HTTP status
// and request id, and never the credentials.
package s3

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"

	"github.com/tidemark-etl/tidemark/objstore"
)

func init() {
	objstore.Register("s3", func(ctx context.Context, location string, opts map[string]string) (objstore.Store, error) {
		cfg, err := ParseOptions(location, opts)
		if err != nil {
			return nil, err
		}
		return New(ctx, cfg)
	})
	objstore.RegisterOptionCheck("s3", CheckOption)
}

// Store is a bucket and a key prefix on an S3-compatible service.
type Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ends with '/'
	cfg    Config

	// copyThreshold is the size above which Move copies in parts (S3 refuses
	// a single CopyObject above 5 GiB); copyPartSize is the part size then.
	// Fields, not constants, so tests can take the multipart path.
	copyThreshold int64
	copyPartSize  int64
	maxHeld       int // ListSkipping: objects held back before probing

	mu       sync.Mutex
	requests map[string]int64 // HTTP attempts per S3 operation
}

var (
	_ objstore.Store         = (*Store)(nil)
	_ objstore.Creator       = (*Store)(nil)
	_ objstore.VersionOpener = (*Store)(nil)
)

// New opens a store. It loads the AWS configuration but sends no request:
// a missing bucket or bad credentials show on the first call.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Store{
		bucket:        cfg.Bucket,
		prefix:        cfg.Prefix,
		cfg:           cfg,
		copyThreshold: maxCopySize,
		copyPartSize:  defaultCopyPartSize,
		maxHeld:       defaultMaxHeld,
		requests:      map[string]int64{},
	}

	httpClient := awshttp.NewBuildableClient().
		WithReadTimeout(cfg.ReadTimeout).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = 64
		})
	load := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cfg.MaxAttempts
				o.MaxBackoff = cfg.MaxBackoff
				// A batch job would rather wait than fail: no client-side
				// retry quota that a burst of throttling could exhaust.
				o.RateLimiter = ratelimit.None
			})
		}),
	}
	if cfg.Profile != "" {
		load = append(load, config.WithSharedConfigProfile(cfg.Profile))
	}
	if cfg.Region != "" {
		load = append(load, config.WithRegion(cfg.Region))
	}
	if cfg.Credentials != nil {
		load = append(load, config.WithCredentialsProvider(cfg.Credentials))
	}
	load = append(load, config.WithLogger(sdkLogger(cfg.Logger)))
	awsCfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("opening %s: loading AWS configuration: %w", s.Root(), err)
	}

	s.client = s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		// The SDK has resolved AWS_ENDPOINT_URL(_S3) and the profile's
		// endpoint_url into BaseEndpoint by now; the store's own wins.
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		custom := o.BaseEndpoint != nil && *o.BaseEndpoint != ""
		if o.Region == "" && custom {
			// S3-compatible services mostly ignore the region, but SigV4
			// needs one.
			o.Region = "us-east-1"
		}
		o.UsePathStyle = custom
		if cfg.PathStyle != nil {
			o.UsePathStyle = *cfg.PathStyle
		}
		o.RetryMaxAttempts = cfg.MaxAttempts // over AWS_MAX_ATTEMPTS: the store's setting is explicit
		o.APIOptions = append(o.APIOptions, s.countRequests)
	})
	if s.client.Options().Region == "" {
		return nil, fmt.Errorf("opening %s: no AWS region: set AWS_REGION, a profile's region or the store's region option", s.Root())
	}
	return s, nil
}

// Root returns s3://bucket/prefix/ (s3://bucket/ for a whole bucket).
func (s *Store) Root() string { return "s3://" + s.bucket + "/" + s.prefix }

// Client returns the SDK client the store sends its requests with, built
// from the AWS chain and the store's options (retries, endpoint, path
// style, request counting), for a package that needs S3 calls the Store
// does not make (store/s3's conditional writes).
func (s *Store) Client() *s3.Client { return s.client }

// Prefix returns the key prefix: "" or ending with '/'.
func (s *Store) Prefix() string { return s.prefix }

// Bucket returns the bucket name.
func (s *Store) Bucket() string { return s.bucket }

// Region returns the region requests are signed for.
func (s *Store) Region() string { return s.client.Options().Region }

// Endpoint returns the custom endpoint, or "" for AWS's own.
func (s *Store) Endpoint() string { return aws.ToString(s.client.Options().BaseEndpoint) }

// PathStyle reports whether requests use path-style addressing.
func (s *Store) PathStyle() bool { return s.client.Options().UsePathStyle }

// LocalPath returns false: objects are not files.
func (s *Store) LocalPath(string) (string, bool) { return "", false }

// key maps a store key to the S3 key.
func (s *Store) key(k string) string { return s.prefix + k }

// url names a store key for messages.
func (s *Store) url(k string) string { return s.Root() + k }

// countRequests counts every HTTP attempt, retries included, by S3
// operation. It sits after the retry middleware, so it runs once per
// attempt.
func (s *Store) countRequests(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("tidemarkCountRequests",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			op := awsmiddleware.GetOperationName(ctx)
			s.mu.Lock()
			s.requests[op]++
			s.mu.Unlock()
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// Requests returns how many HTTP requests the store has sent, retries
// included, by S3 operation ("ListObjectsV2", "PutObject", ...).
func (s *Store) Requests() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]int64, len(s.requests))
	for k, v := range s.requests {
		m[k] = v
	}
	return m
}

// ResetRequests sets every request count back to zero.
func (s *Store) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.requests)
}

// sdkLogger sends the SDK's messages (checksum notices and the like) to l
// at debug level instead of straight to stderr.
func sdkLogger(l *slog.Logger) logging.Logger {
	if l == nil {
		return logging.Nop{}
	}
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		l.Debug(fmt.Sprintf(format, v...), "source", "aws-sdk", "level", string(c))
	})
}

// etag returns an ETag without its quotes.
func etag(p *string) string { return strings.Trim(aws.ToString(p), `"`) }

// modTime returns LastModified in UTC (zero if the service sent none).
func modTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
