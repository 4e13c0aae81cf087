package objstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// Opener opens a store rooted at location.
type Opener func(ctx context.Context, location string, opts map[string]string) (Store, error)

var (
	mu      sync.Mutex
	openers = map[string]Opener{}
)

// Register makes a backend available under a URL scheme ("file", "s3").
func Register(scheme string, o Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[scheme] = o
}

// OptionCheck checks one setting of a scheme's stores without opening one;
// its error names the setting, not the location.
type OptionCheck func(name, value string) error

var optionChecks = map[string]OptionCheck{}

// RegisterOptionCheck makes the settings of a scheme's stores checkable
// before anything is opened (a job file's s3: settings, with their line).
func RegisterOptionCheck(scheme string, c OptionCheck) {
	mu.Lock()
	defer mu.Unlock()
	optionChecks[scheme] = c
}

// CheckOption checks the setting name=value of scheme's stores; nil when
// the scheme registered no check.
func CheckOption(scheme, name, value string) error {
	mu.Lock()
	c := optionChecks[scheme]
	mu.Unlock()
	if c == nil {
		return nil
	}
	return c(name, value)
}

// Scheme returns the URL scheme of location; plain paths are "file".
func Scheme(location string) string {
	if i := strings.Index(location, "://"); i > 0 {
		return location[:i]
	}
	return "file"
}

// Open opens the store rooted at location: a plain path, file://PATH or
// another registered scheme such as s3://bucket/prefix. opts are
// backend-specific settings (for S3: endpoint, region, path_style, profile).
//
// A remote location may carry its options as a query string
// (s3://bucket/prefix?endpoint=...&region=...), which is how tidemark keeps
// a sink's settings in its output manifests (never credentials).
func Open(ctx context.Context, location string, opts map[string]string) (Store, error) {
	scheme := Scheme(location)
	if i := strings.IndexByte(location, '?'); i >= 0 && scheme != "file" {
		q, err := url.ParseQuery(location[i+1:])
		if err != nil {
			return nil, fmt.Errorf("opening %s: bad options in its query string", location[:i])
		}
		merged := map[string]string{}
		for k := range q {
			merged[k] = q.Get(k)
		}
		for k, v := range opts {
			merged[k] = v
		}
		location, opts = location[:i], merged
	}
	mu.Lock()
	o, ok := openers[scheme]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("opening %s: no object store for scheme %q", location, scheme)
	}
	return o(ctx, location, opts)
}

// WithOptions returns location with opts as its query string (sorted), so
// that Open(WithOptions(loc, opts), nil) opens the same store.
func WithOptions(location string, opts map[string]string) string {
	if len(opts) == 0 || Scheme(location) == "file" {
		return location
	}
	q := url.Values{}
	for k, v := range opts {
		q.Set(k, v)
	}
	return location + "?" + q.Encode()
}
