package objstore

import (
	"context"
	"errors"
	"iter"
)

// ErrStale means a conditional replace found the object changed, or gone,
// since the version the caller read (S3: a PutObject with If-Match got
// 412).
var ErrStale = errors.New("the object changed since it was read")

// Swapper is implemented by stores that can replace a small object only
// while it is still the version a caller read: a compare-and-swap. Of
// several callers swapping from one version, at most one succeeds and the
// others get ErrStale. (S3: the GET's ETag, then a PutObject with
// If-Match; local disks: an exclusive lock on the key's folder, held while
// the content is compared and the new file renamed in.)
type Swapper interface {
	// ReadVersion reads key whole with its version; ErrNotExist if it is
	// missing. For small objects (records).
	ReadVersion(ctx context.Context, key string) (data []byte, version string, err error)
	// Swap replaces key with data if its version is still version:
	// ErrStale if it changed or is gone. The object is replaced whole or
	// not at all.
	Swap(ctx context.Context, key string, data []byte, version string) error
}

// FolderLister is implemented by stores that can list the folders right
// under a prefix, those that hold no object too (an empty local folder;
// on S3 a folder marker, a key ending in '/').
type FolderLister interface {
	// Folders yields the names (one path segment, no '/') of the folders
	// right under prefix (a key prefix ending in '/'), in no set order.
	Folders(ctx context.Context, prefix string) iter.Seq2[string, error]
}
