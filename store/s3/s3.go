package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/tidemark-etl/tidemark/catalog"
	objs3 "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
)

func init() {
	store.Register("s3", func(ctx context.Context, location string) (store.Store, error) {
		return Open(ctx, location, Options{})
	})
	store.RegisterExisting("s3", func(ctx context.Context, location string, readOnly bool) (store.Store, error) {
		return Open(ctx, location, Options{MustExist: true, ReadOnly: readOnly})
	})
}

// Options configure Open.
type Options struct {
	// S3 overrides the client settings the location's query string gives
	// (s3://bucket/prefix/?region=eu-west-1&endpoint=...): any field set
	// here wins. Bucket and Prefix always come from the location.
	S3 objs3.Config
	// MustExist refuses to create a store: store.ErrNoState if the
	// location holds none.
	MustExist bool
	// ReadOnly writes nothing, not even the conditional-write probe (for
	// commands that only read state). Implies MustExist.
	ReadOnly bool
	// LocalClock is this host's clock (nil: time.Now). The store judges
	// nothing by its absolute value, only by its differences between two
	// requests; tests set it wrong to show that.
	LocalClock func() time.Time
	// WrapHTTP wraps the HTTP client of every request (nil: none), for
	// tests that inject faults in front of a real server and for
	// benchmarks that count requests.
	WrapHTTP func(aws.HTTPClient) aws.HTTPClient

	// apiOptions are added to the client's middleware stacks (tests that
	// change requests before they are signed).
	apiOptions []func(*middleware.Stack) error
}

// Store is a state store in an S3 bucket under a prefix: the objcore
// store over the S3 backend.
type Store struct {
	*objcore.Store
	b *backend
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobLister   = (*Store)(nil)
	_ store.LeaseReader = (*Store)(nil)
	_ store.Importer    = (*Store)(nil)
	_ catalog.Store     = (*Store)(nil)
)

// Open opens the state store at location, s3://bucket/prefix/, creating
// it (its identity object) unless o.MustExist or o.ReadOnly. Unless
// o.ReadOnly it probes that the service honours conditional writes and
// refuses one that does not.
func Open(ctx context.Context, location string, o Options) (*Store, error) {
	loc, query, _ := strings.Cut(location, "?")
	opts := map[string]string{}
	if query != "" {
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, fmt.Errorf("opening s3 state store %s: options: %w", store.Redact(location), err)
		}
		for k, v := range q {
			opts[k] = v[len(v)-1]
		}
	}
	cfg, err := objs3.ParseOptions(loc, opts)
	if err != nil {
		return nil, fmt.Errorf("opening s3 state store: %w", err)
	}
	cfg = override(cfg, o.S3)
	obj, err := objs3.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening s3 state store: %w", err)
	}
	client := obj.Client()
	if o.WrapHTTP != nil {
		client = s3.New(client.Options(), func(so *s3.Options) { so.HTTPClient = o.WrapHTTP(so.HTTPClient) })
	}
	if len(o.apiOptions) > 0 {
		client = s3.New(client.Options(), func(so *s3.Options) { so.APIOptions = append(so.APIOptions, o.apiOptions...) })
	}
	local := o.LocalClock
	if local == nil {
		local = time.Now
	}
	b := &backend{client: client, bucket: obj.Bucket(), prefix: obj.Prefix(), root: obj.Root(),
		local: local, clock: &serverClock{base: local()}}
	core, err := objcore.Open(ctx, b, objcore.Options{Kind: "s3", MustExist: o.MustExist, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := b.probe(ctx); err != nil {
			return nil, err
		}
	}
	return &Store{Store: core, b: b}, nil
}

// override sets in c every field that o sets.
func override(c, o objs3.Config) objs3.Config {
	if o.Endpoint != "" {
		c.Endpoint = o.Endpoint
	}
	if o.Region != "" {
		c.Region = o.Region
	}
	if o.PathStyle != nil {
		c.PathStyle = o.PathStyle
	}
	if o.Profile != "" {
		c.Profile = o.Profile
	}
	if o.Credentials != nil {
		c.Credentials = o.Credentials
	}
	if o.Logger != nil {
		c.Logger = o.Logger
	}
	if o.MaxAttempts != 0 {
		c.MaxAttempts = o.MaxAttempts
	}
	if o.MaxBackoff != 0 {
		c.MaxBackoff = o.MaxBackoff
	}
	if o.ReadTimeout != 0 {
		c.ReadTimeout = o.ReadTimeout
	}
	return c
}

// probe checks that the service honours conditional writes, which every
// commit and lease relies on: a create (If-None-Match: *) of the identity
// object, which exists, must fail with 412, and so must a replace
// (If-Match) with an ETag it does not have. Both send the identity's own
// bytes, so a service that ignores the conditions rewrites it unchanged.
func (b *backend) probe(ctx context.Context) error {
	key := objcore.IdentityKey
	o, ok := b.identity()
	if !ok {
		var err error
		if o, err = b.Get(ctx, key); err != nil {
			return fmt.Errorf("opening s3 state store %s: probing conditional writes: %w", b.root, err)
		}
	}
	refuse := func(what string) error {
		return fmt.Errorf("opening s3 state store %s: the service does not honour %s on PutObject: "+
			"a state store needs conditional writes (If-None-Match: * and If-Match), which AWS S3 (since 2024), "+
			"versitygw and recent MinIO support; use one of those, or another state store", b.root, what)
	}
	_, err := b.Put(ctx, key, o.Body, objcore.Cond{IfNoneMatch: true})
	switch {
	case err == nil:
		return refuse("If-None-Match: *")
	case !errors.Is(err, objcore.ErrPrecondition):
		return fmt.Errorf("opening s3 state store %s: probing conditional writes: %w", b.root, err)
	}
	_, err = b.Put(ctx, key, o.Body, objcore.Cond{IfMatch: `"0123456789abcdef0123456789abcdef"`})
	switch {
	case err == nil:
		return refuse("If-Match")
	case !errors.Is(err, objcore.ErrPrecondition):
		return fmt.Errorf("opening s3 state store %s: probing conditional writes: %w", b.root, err)
	}
	return nil
}
