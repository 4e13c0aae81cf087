package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tidemark-etl/tidemark/internal/secret"
)

// Opener opens a store from a location URL.
type Opener func(ctx context.Context, location string) (Store, error)

// ExistingOpener opens a store that must already exist (ErrNoState if it
// does not), creating nothing; with readOnly it writes nothing either.
type ExistingOpener func(ctx context.Context, location string, readOnly bool) (Store, error)

// ErrNoState means there is no state store at a location (OpenExisting).
var ErrNoState = errors.New("no state store")

var (
	mu        sync.Mutex
	openers   = map[string]Opener{}
	existings = map[string]ExistingOpener{}
)

// Register makes a backend available under a URL scheme ("sqlite",
// "postgres", "s3"). The scheme "" is used for plain paths.
func Register(scheme string, o Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[scheme] = o
}

// RegisterExisting registers a backend's ExistingOpener under a URL
// scheme; a backend without one is opened with its Opener by OpenExisting.
func RegisterExisting(scheme string, o ExistingOpener) {
	mu.Lock()
	defer mu.Unlock()
	existings[scheme] = o
}

// Open opens the store at location: a plain path (SQLite), sqlite://PATH,
// or another registered scheme.
func Open(ctx context.Context, location string) (Store, error) {
	o, _, err := opener(location)
	if err != nil {
		return nil, err
	}
	return o(ctx, location)
}

// OpenExisting opens the store at location for a command about state that
// must exist (runs, bookmark show, bookmark reset, plan): ErrNoState if
// there is none, and nothing is created. With readOnly nothing is written.
func OpenExisting(ctx context.Context, location string, readOnly bool) (Store, error) {
	o, e, err := opener(location)
	if err != nil {
		return nil, err
	}
	if e != nil {
		return e(ctx, location, readOnly)
	}
	return o(ctx, location)
}

// opener finds the backend of location's scheme.
func opener(location string) (Opener, ExistingOpener, error) {
	scheme := ""
	if i := strings.Index(location, "://"); i > 0 {
		scheme = location[:i]
	}
	if scheme == "" || scheme == "file" {
		scheme = "sqlite"
	}
	mu.Lock()
	o, ok := openers[scheme]
	e := existings[scheme]
	names := make([]string, 0, len(openers))
	for k := range openers {
		names = append(names, k)
	}
	mu.Unlock()
	if !ok {
		sort.Strings(names)
		return nil, nil, fmt.Errorf("state store %q: unknown scheme %q (known: %s)", Redact(location), scheme, strings.Join(names, ", "))
	}
	return o, e, nil
}

// Redact masks a password or token in a URL-shaped location for messages
// (user info, query string, key=value pairs).
func Redact(location string) string {
	_, masked := secret.Find(location)
	return masked
}
