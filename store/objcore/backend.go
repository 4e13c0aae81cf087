package objcore

import (
	"context"
	"errors"
	"io"
	"time"
)

// Backend is where a Store keeps its objects: a flat key space with
// compare-and-swap writes, and a clock. Everything the store decides
// (leases, versions, runs, commits, the catalog) is written on top of
// these methods alone; a backend adds no rule of its own. Keys are
// relative to the store (jobs/JOB/head.json) and made of path segments.
//
// What a backend must promise:
//   - Put with IfNoneMatch creates the object only if no object is at the
//     key, and Put with IfMatch replaces it only while its ETag is the one
//     given; each is atomic: of two racing conditional writes on one key at
//     most one succeeds, and the other gets ErrPrecondition.
//   - Every write's ETag differs from the ETag the key had before it unless
//     the bytes are the same (the store makes the bytes of every swap
//     unique, so an ETag may be a hash of the bytes).
//   - Read-after-write: once Put or Delete returned, every Get, Stat, Open
//     and List of any host sees it.
//   - List yields keys in byte order.
//   - Errors name the object (the store's URL of the key), never a secret.
//     An error that is not ErrPrecondition or ErrMissing leaves the outcome
//     of a write unknown: it may have applied. The store finds out by
//     reading, so a write may be retried and a lost answer is not a loss.
//   - Now never goes back, and Expired(t) is true only once the store's
//     clock is surely past t, whatever the host's clock says.
//
// Methods are safe for concurrent use and take ctx first; none keeps it.
type Backend interface {
	// Root names the store in messages and its Identity:
	// s3://bucket/prefix/ or memory://NAME. Root()+key is an object's URL.
	Root() string
	// Get reads the object at key whole, with its ETag; ErrMissing if
	// there is none.
	Get(ctx context.Context, key string) (Object, error)
	// Open streams the object at key; ErrMissing if there is none. The
	// caller closes it.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Stat returns the ETag of the object at key; ErrMissing if there is
	// none.
	Stat(ctx context.Context, key string) (string, error)
	// Put writes body at key under c and returns the new ETag;
	// ErrPrecondition when c does not hold (nothing written); IfMatch of
	// a missing object may instead be ErrMissing (S3 answers 404).
	Put(ctx context.Context, key string, body []byte, c Cond) (string, error)
	// Delete removes the object at key; a missing one is not an error.
	Delete(ctx context.Context, key string) error
	// List yields the objects below prefix whose keys sort after
	// startAfter ("" for all), in byte order of their keys, until yield
	// returns false or an error (which List returns).
	List(ctx context.Context, prefix, startAfter string, yield func(Entry) (bool, error)) error
	// Folders returns the names of the folders right below prefix (the
	// key segments after it that more of a key follows), sorted.
	Folders(ctx context.Context, prefix string) ([]string, error)
	// Now returns the time on the store's clock, the one that judges lease
	// expiry; it never goes back.
	Now(ctx context.Context) (time.Time, error)
	// Expired reports whether the store's clock is surely past t (a lease
	// that expires at t has expired); when it cannot tell yet, it finds
	// out (it may take a few round trips) or says no.
	Expired(ctx context.Context, t time.Time) (bool, error)
}

// Object is an object read whole.
type Object struct {
	Body []byte
	ETag string // as Cond.IfMatch wants it
}

// Cond is the condition of a write; the zero Cond writes unconditionally.
type Cond struct {
	IfNoneMatch bool   // create only: no object is at the key
	IfMatch     string // replace only this version: its ETag
}

// Entry is one object of a listing.
type Entry struct {
	Key  string
	Size int64
}

// ErrPrecondition means a conditional write lost: the object exists
// (IfNoneMatch) or changed (IfMatch). Backends wrap it.
var ErrPrecondition = errors.New("conditional write refused")

// ErrMissing means there is no object at the key. Backends wrap it.
var ErrMissing = errors.New("no such object")
