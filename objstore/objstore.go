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

// ErrChanged means the object changed while it was read: the bytes read so
// far belong to a version that is gone (S3: a GET pinned with If-Match to
// the ETag first read got 412).
var ErrChanged = errors.New("the object changed while it was read")

// ErrUploadGone means a prepared upload can no longer be completed: it was
// aborted (by hand, or by a bucket lifecycle rule for incomplete uploads)
// and its object was never published.
var ErrUploadGone = errors.New("the upload is gone (aborted) and its object was never published")

// ErrExists means a conditional create found the key taken.
var ErrExists = errors.New("object already exists")

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

// Downloader is implemented by remote stores that copy an object to a local
// file faster than Open (ranged, parallel GETs). The returned Object is the
// version that was read, so callers can check it against what they planned.
type Downloader interface {
	Download(ctx context.Context, key, localPath string, concurrency int, partSize int64) (Object, error)
}

// VersionOpener is implemented by stores whose reads say which version of
// the object they return (S3: the GET's ETag, length and LastModified), so
// that a caller records what it read, not what it listed.
type VersionOpener interface {
	OpenVersion(ctx context.Context, key string) (io.ReadCloser, Object, error)
}

// AfterLister is implemented by stores that can start a listing after a key
// (S3 StartAfter), so a prefix whose keys sort in arrival order is listed
// from where the last run stopped.
type AfterLister interface {
	ListAfter(ctx context.Context, prefix, startAfter string) iter.Seq2[Object, error]
}

// UploadAborter is implemented by stores with multipart uploads: it aborts
// incomplete uploads under prefix older than olderThan (a dead run's)
// whose key match accepts (nil: every key).
type UploadAborter interface {
	AbortStaleUploads(ctx context.Context, prefix string, olderThan time.Duration, match func(key string) bool) (int, error)
}

// Preparer is implemented by stores that can send an object's bytes before
// publishing it: PrepareUpload uploads r for key and returns an id, and
// nothing is visible at key until CompleteUpload(key, id), which moves no
// bytes and may be repeated. Prepared uploads never completed are removed
// by UploadAborter. (S3: a multipart upload completed later.)
type Preparer interface {
	PrepareUpload(ctx context.Context, key string, r io.Reader) (id string, err error)
	CompleteUpload(ctx context.Context, key, id string) error
}

// Creator is implemented by stores that can write an object only where
// none exists, atomically: of several callers creating one key at once,
// exactly one succeeds and the others get ErrExists, as does a caller
// finding the key taken. The object appears whole or not at all. (S3: a
// PutObject with If-None-Match: *; local disks: a complete temporary file
// hard-linked to the key, or where the file system has no hard links an
// exclusive create written in place, which a racing reader can see short.)
type Creator interface {
	Create(ctx context.Context, key string, r io.Reader) error
}

// ListAfter lists keys after startAfter under prefix: with the store's
// StartAfter where it has one, else by skipping.
func ListAfter(ctx context.Context, s Store, prefix, startAfter string) iter.Seq2[Object, error] {
	if a, ok := s.(AfterLister); ok {
		return a.ListAfter(ctx, prefix, startAfter)
	}
	return func(yield func(Object, error) bool) {
		for o, err := range s.List(ctx, prefix) {
			if err == nil && o.Key <= startAfter {
				continue
			}
			if !yield(o, err) || err != nil {
				return
			}
		}
	}
}
