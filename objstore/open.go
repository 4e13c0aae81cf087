package objstore

import (
	"context"
	"fmt"
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
func Open(ctx context.Context, location string, opts map[string]string) (Store, error) {
	scheme := Scheme(location)
	mu.Lock()
	o, ok := openers[scheme]
	mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("opening %s: no object store for scheme %q", location, scheme)
	}
	return o(ctx, location, opts)
}
