// Package memory is an in-memory state store: every job's state kept in
// this process's memory, lost when the process exits. It is for tests and
// for runs whose state need not outlive the process. It registers itself
// for memory://NAME: in one process, every Open of the same NAME returns
// the same store.
//
// It is store/objcore over objcore.MemBackend, a map of objects under a
// mutex: the same rules, objects and formats as the S3 store, so what
// passes here passes there. Values are copied in and out (they are stored
// encoded): a caller that changes a slice or map it passed in or got back
// does not change the store.
package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/objcore"
)

// Options configure a new store.
type Options struct {
	// Name is the store's name, shown in its Identity's Location as
	// memory://NAME; empty for an unnamed store.
	Name string
	// Now is the store's clock: it judges lease expiry and stamps times a
	// caller left zero. Nil means time.Now.
	Now func() time.Time
}

// Store is an in-memory state store: the objcore store over a MemBackend.
type Store struct {
	*objcore.Store
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobLister   = (*Store)(nil)
	_ store.LeaseReader = (*Store)(nil)
	_ store.Importer    = (*Store)(nil)
	_ catalog.Store     = (*Store)(nil)
)

// New returns a new, empty store.
func New(o Options) *Store {
	id := randomID()
	loc := "memory://" + o.Name
	if o.Name == "" {
		loc = "memory://(unnamed " + id + ")"
	}
	core, err := objcore.Open(context.Background(), objcore.NewMemBackend(loc, o.Now), objcore.Options{Kind: "memory", ID: id})
	if err != nil {
		// A MemBackend fails no write: only a bug gets here.
		panic(fmt.Sprintf("making memory state store %s: %v", loc, err))
	}
	return &Store{Store: core}
}

// randomID returns 16 random bytes in hex.
func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var (
	namedMu sync.Mutex
	named   = map[string]*Store{}
)

func init() {
	store.Register("memory", func(_ context.Context, location string) (store.Store, error) {
		return Open(location)
	})
}

// Open returns the store named by location (memory://NAME), making it on
// first use: every Open of one NAME in a process returns the same store.
func Open(location string) (*Store, error) {
	name, ok := strings.CutPrefix(location, "memory://")
	if !ok || name == "" {
		return nil, fmt.Errorf("opening memory state store %q: want memory://NAME", location)
	}
	namedMu.Lock()
	defer namedMu.Unlock()
	s, ok := named[name]
	if !ok {
		s = New(Options{Name: name})
		named[name] = s
	}
	return s, nil
}
