package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
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

// Redact removes a password from a URL-shaped location for messages.
func Redact(location string) string {
	i := strings.Index(location, "://")
	if i < 0 {
		return location
	}
	rest := location[i+3:]
	at := strings.Index(rest, "@")
	slash := strings.Index(rest, "/")
	if at < 0 || (slash >= 0 && slash < at) {
		return location
	}
	user := rest[:at]
	if c := strings.Index(user, ":"); c >= 0 {
		user = user[:c] + ":xxxxx"
	}
	return location[:i+3] + user + rest[at:]
}
