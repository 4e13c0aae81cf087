package s3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	objs3 "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/store"
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

// Store is a state store in an S3 bucket under a prefix. See the package
// documentation for its objects and rules.
type Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ends with '/'
	root     string // s3://bucket/prefix/, for messages
	local    func() time.Time
	clock    *serverClock
	id       store.Identity
	readOnly bool
	idBody   []byte // the identity object's bytes, for the probe

	cacheMu sync.Mutex
	cache   map[string][]byte // immutable objects read (versions), by key
	heads   map[string]cachedHead
	applied map[patch]bool // pending run-record changes this process wrote
}

// cachedHead is the last head of a job this process read or wrote: the
// first guess of its next swap (a stale one costs a 412 and a read).
type cachedHead struct {
	body []byte
	etag string
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobLister   = (*Store)(nil)
	_ store.LeaseReader = (*Store)(nil)
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
	s := &Store{
		client: client, bucket: obj.Bucket(), prefix: obj.Prefix(), root: obj.Root(),
		local: local, clock: &serverClock{base: local()}, readOnly: o.ReadOnly,
		cache: map[string][]byte{}, heads: map[string]cachedHead{}, applied: map[patch]bool{},
	}
	if err := s.openIdentity(ctx, o.MustExist || o.ReadOnly); err != nil {
		return nil, err
	}
	if !o.ReadOnly {
		if err := s.probe(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
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

// identityKey is the object that makes a prefix a state store.
const identityKey = "tidemark-state.json"

// identityObj is the identity object's content.
type identityObj struct {
	ID      string    `json:"id"`
	Format  int       `json:"format"`
	Created time.Time `json:"created"`
}

// formatVersion is the layout this package writes and reads.
const formatVersion = 1

// openIdentity reads the store's identity, creating it (If-None-Match: *)
// unless mustExist.
func (s *Store) openIdentity(ctx context.Context, mustExist bool) error {
	for range 3 {
		var id identityObj
		o, err := s.getObject(ctx, identityKey)
		if err == nil {
			s.idBody = o.body
			if jerr := json.Unmarshal(o.body, &id); jerr != nil {
				return fmt.Errorf("opening s3 state store %s: %s is not a tidemark state store's identity: %w", s.root, identityKey, jerr)
			}
		}
		switch {
		case err == nil:
			if id.Format > formatVersion {
				return fmt.Errorf("opening s3 state store %s: it was written in format %d by a newer tidemark (this one reads format %d)",
					s.root, id.Format, formatVersion)
			}
			s.id = store.Identity{ID: id.ID, Location: s.root}
			return nil
		case !errors.Is(err, errMissing):
			return fmt.Errorf("opening s3 state store %s: %w", s.root, err)
		case mustExist:
			return fmt.Errorf("%w: %s holds no %s", store.ErrNoState, s.root, identityKey)
		}
		now, err := s.Now(ctx)
		if err != nil {
			return fmt.Errorf("opening s3 state store %s: %w", s.root, err)
		}
		_, err = s.putJSON(ctx, identityKey, identityObj{ID: nonce() + nonce(), Format: formatVersion, Created: now}, cond{ifNoneMatch: true})
		if err != nil && !errors.Is(err, errPrecondition) {
			return fmt.Errorf("creating s3 state store %s: %w", s.root, err)
		}
		// Made, or made by another process at the same time: read it.
	}
	return fmt.Errorf("opening s3 state store %s: its identity object keeps changing", s.root)
}

// probe checks that the service honours conditional writes, which every
// commit and lease relies on: a create (If-None-Match: *) of the identity
// object, which exists, must fail with 412, and so must a replace
// (If-Match) with an ETag it does not have. Both send the identity's own
// bytes, so a service that ignores the conditions rewrites it unchanged.
func (s *Store) probe(ctx context.Context) error {
	o := object{body: s.idBody}
	key := identityKey
	refuse := func(what string) error {
		return fmt.Errorf("opening s3 state store %s: the service does not honour %s on PutObject: "+
			"a state store needs conditional writes (If-None-Match: * and If-Match), which AWS S3 (since 2024), "+
			"versitygw and recent MinIO support; use one of those, or another state store", s.root, what)
	}
	_, err := s.putObject(ctx, key, o.body, cond{ifNoneMatch: true})
	switch {
	case err == nil:
		return refuse("If-None-Match: *")
	case !errors.Is(err, errPrecondition):
		return fmt.Errorf("opening s3 state store %s: probing conditional writes: %w", s.root, err)
	}
	_, err = s.putObject(ctx, key, o.body, cond{ifMatch: `"0123456789abcdef0123456789abcdef"`})
	switch {
	case err == nil:
		return refuse("If-Match")
	case !errors.Is(err, errPrecondition):
		return fmt.Errorf("opening s3 state store %s: probing conditional writes: %w", s.root, err)
	}
	return nil
}

// key maps a store key to the S3 key.
func (s *Store) key(k string) string { return s.prefix + k }

// url names a store key for messages.
func (s *Store) url(k string) string { return s.root + k }

// Identity returns the id made when the store was created and its
// location, s3://bucket/prefix/.
func (s *Store) Identity(context.Context) (store.Identity, error) { return s.id, nil }

// Close releases nothing: the store holds no connection of its own.
func (s *Store) Close() error { return nil }

// writable refuses a write on a store opened read-only.
func (s *Store) writable() error {
	if s.readOnly {
		return fmt.Errorf("s3 state store %s is open read-only", s.root)
	}
	return nil
}
