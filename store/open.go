package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tidemark-etl/tidemark/internal/secret"
)

// Opener opens a store from a location URL.
type Opener func(ctx context.Context, location string) (Store, error)

var (
	mu      sync.Mutex
	openers = map[string]Opener{}
)

// Register makes a backend available under a URL scheme ("sqlite",
// "postgres", "s3"). The scheme "" is used for plain paths.
func Register(scheme string, o Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[scheme] = o
}

// Open opens the store at location: a plain path (SQLite), sqlite://PATH,
// or another registered scheme.
func Open(ctx context.Context, location string) (Store, error) {
	scheme := ""
	if i := strings.Index(location, "://"); i > 0 {
		scheme = location[:i]
	}
	if scheme == "" || scheme == "file" {
		scheme = "sqlite"
	}
	mu.Lock()
	o, ok := openers[scheme]
	names := make([]string, 0, len(openers))
	for k := range openers {
		names = append(names, k)
	}
	mu.Unlock()
	if !ok {
		sort.Strings(names)
		return nil, fmt.Errorf("state store %q: unknown scheme %q (known: %s)", Redact(location), scheme, strings.Join(names, ", "))
	}
	return o(ctx, location)
}

// Redact masks a password or token in a URL-shaped location for messages
// (user info, query string, key=value pairs).
func Redact(location string) string {
	_, masked := secret.Find(location)
	return masked
}
