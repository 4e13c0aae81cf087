package objcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// Store is the state store over a Backend. See the package documentation
// for its objects and rules.
type Store struct {
	b        Backend
	kind     string // "s3", "memory": for messages
	root     string // the backend's Root, for messages
	id       store.Identity
	readOnly bool

	cacheMu sync.Mutex
	cache   map[string][]byte // immutable objects read (versions), by key
	heads   map[string]cachedHead
	applied map[patch]bool // pending run-record changes this process wrote
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.JobLister   = (*Store)(nil)
	_ store.LeaseReader = (*Store)(nil)
)

// cachedHead is the last head of a job this process read or wrote: the
// first guess of its next swap (a stale one costs a 412 and a read).
type cachedHead struct {
	body []byte
	etag string
}

// Options configure Open.
type Options struct {
	// Kind names the backend in messages ("opening s3 state store ...").
	Kind string
	// MustExist refuses to create a store: store.ErrNoState if the
	// backend holds none.
	MustExist bool
	// ReadOnly writes nothing. Implies MustExist.
	ReadOnly bool
	// ID is the id of a store made now ("": a random one).
	ID string
}

// Open opens the state store the backend holds, creating it (its
// identity object) unless o.MustExist or o.ReadOnly.
func Open(ctx context.Context, b Backend, o Options) (*Store, error) {
	s := &Store{b: b, kind: o.Kind, root: b.Root(), readOnly: o.ReadOnly,
		cache: map[string][]byte{}, heads: map[string]cachedHead{}, applied: map[patch]bool{}}
	if err := s.openIdentity(ctx, o.MustExist || o.ReadOnly, o.ID); err != nil {
		return nil, err
	}
	return s, nil
}

// IdentityKey is the object that makes a prefix a state store.
const IdentityKey = "tidemark-state.json"

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
func (s *Store) openIdentity(ctx context.Context, mustExist bool, newID string) error {
	for range 3 {
		var id identityObj
		o, err := s.b.Get(ctx, IdentityKey)
		if err == nil {
			if jerr := json.Unmarshal(o.Body, &id); jerr != nil {
				return fmt.Errorf("opening %s state store %s: %s is not a tidemark state store's identity: %w", s.kind, s.root, IdentityKey, jerr)
			}
		}
		switch {
		case err == nil:
			if id.Format > formatVersion {
				return fmt.Errorf("opening %s state store %s: it was written in format %d by a newer tidemark (this one reads format %d)",
					s.kind, s.root, id.Format, formatVersion)
			}
			s.id = store.Identity{ID: id.ID, Location: s.root}
			return nil
		case !errors.Is(err, ErrMissing):
			return fmt.Errorf("opening %s state store %s: %w", s.kind, s.root, err)
		case mustExist:
			return fmt.Errorf("%w: %s holds no %s", store.ErrNoState, s.root, IdentityKey)
		}
		now, err := s.Now(ctx)
		if err != nil {
			return fmt.Errorf("opening %s state store %s: %w", s.kind, s.root, err)
		}
		if newID == "" {
			newID = nonce() + nonce()
		}
		_, err = s.putJSON(ctx, IdentityKey, identityObj{ID: newID, Format: formatVersion, Created: now}, Cond{IfNoneMatch: true})
		if err != nil && !errors.Is(err, ErrPrecondition) {
			return fmt.Errorf("creating %s state store %s: %w", s.kind, s.root, err)
		}
		// Made, or made by another process at the same time: read it.
	}
	return fmt.Errorf("opening %s state store %s: its identity object keeps changing", s.kind, s.root)
}

// Identity returns the id made when the store was created and its
// location (the backend's Root).
func (s *Store) Identity(context.Context) (store.Identity, error) { return s.id, nil }

// Close releases nothing: the store holds no connection of its own.
func (s *Store) Close() error { return nil }

// Now returns the time on the store's clock (the backend's).
func (s *Store) Now(ctx context.Context) (time.Time, error) { return s.b.Now(ctx) }

// writable refuses a write on a store opened read-only.
func (s *Store) writable() error {
	if s.readOnly {
		return fmt.Errorf("%s state store %s is open read-only", s.kind, s.root)
	}
	return nil
}
