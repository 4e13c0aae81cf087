// Package objstore lists, reads and writes objects under a root: a local
// folder or (later) an S3 bucket and prefix. Keys are relative to the root
// and '/'-separated. Backends register by URL scheme.
package objstore

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"
)

// ErrNotExist means the object does not exist.
var ErrNotExist = errors.New("object does not exist")

// Object is one listed object.
type Object struct {
	Key     string // relative to the store's root, '/'-separated
	Size    int64
	ModTime time.Time
	ETag    string // empty where the store has none
}

// Store is a rooted object store.
type Store interface {
	// Root returns the location the store was opened at (for messages).
	Root() string
	// List yields every object whose key starts with prefix, recursively,
	// in ascending byte order of Key. Names (any path segment) that start
	// with '_' or '.' are skipped unless prefix itself names them.
	List(ctx context.Context, prefix string) iter.Seq2[Object, error]
	// Stat returns one object; ErrNotExist if missing.
	Stat(ctx context.Context, key string) (Object, error)
	// Open reads one object; ErrNotExist if missing.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Put writes an object from r, atomically: readers see the old object or
	// the whole new one, never a part.
	Put(ctx context.Context, key string, r io.Reader) error
	// Move renames from to to, replacing to. Idempotent for roll-forward: if
	// from is gone and to exists, it returns nil.
	Move(ctx context.Context, from, to string) error
	// Delete removes an object; a missing object is not an error.
	Delete(ctx context.Context, key string) error
	// DeletePrefix removes every object under prefix (including '_'-names).
	DeletePrefix(ctx context.Context, prefix string) error
	// LocalPath returns the file-system path of key when the store is a
	// local disk, so the engine can read and write it in place.
	LocalPath(key string) (string, bool)
}
