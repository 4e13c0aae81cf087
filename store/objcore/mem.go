package objcore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemBackend is a Backend in this process's memory: a map of key to bytes
// and ETag under one mutex, so every write, conditional or not, is atomic
// and every read sees every write before it. Its ETags are a counter, so
// no two writes share one. Its clock is the function it was given.
type MemBackend struct {
	root string
	now  func() time.Time

	mu   sync.Mutex
	objs map[string]memObject
	keys []string // the keys of objs, sorted
	gen  int64    // the last ETag handed out
}

// memObject is one object: its bytes are never changed once stored.
type memObject struct {
	body []byte
	etag string
}

var _ Backend = (*MemBackend)(nil)

// NewMemBackend returns an empty backend named root (memory://NAME) whose
// clock is now (nil: time.Now).
func NewMemBackend(root string, now func() time.Time) *MemBackend {
	if now == nil {
		now = time.Now
	}
	return &MemBackend{root: root, now: now, objs: map[string]memObject{}}
}

// Root returns the name the backend was made with.
func (b *MemBackend) Root() string { return b.root }

// get returns the object at key.
func (b *MemBackend) get(doing, key string) (memObject, error) {
	b.mu.Lock()
	o, ok := b.objs[key]
	b.mu.Unlock()
	if !ok {
		return memObject{}, fmt.Errorf("%s %s: %w", doing, b.root+key, ErrMissing)
	}
	return o, nil
}

// Get returns the object at key (its bytes are shared: callers do not
// change them).
func (b *MemBackend) Get(_ context.Context, key string) (Object, error) {
	o, err := b.get("reading", key)
	return Object{Body: o.body, ETag: o.etag}, err
}

// Open reads the object at key.
func (b *MemBackend) Open(_ context.Context, key string) (io.ReadCloser, error) {
	o, err := b.get("reading", key)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(o.body)), nil
}

// Stat returns the ETag of the object at key.
func (b *MemBackend) Stat(_ context.Context, key string) (string, error) {
	o, err := b.get("reading", key)
	return o.etag, err
}

// Put stores a copy of body at key if c holds.
func (b *MemBackend) Put(_ context.Context, key string, body []byte, c Cond) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cur, ok := b.objs[key]
	if c.IfNoneMatch && ok || c.IfMatch != "" && (!ok || cur.etag != c.IfMatch) {
		return "", fmt.Errorf("writing %s: %w", b.root+key, ErrPrecondition)
	}
	b.gen++
	o := memObject{body: bytes.Clone(body), etag: fmt.Sprintf(`"%d"`, b.gen)}
	if o.body == nil {
		o.body = []byte{}
	}
	if !ok {
		i, _ := slices.BinarySearch(b.keys, key)
		b.keys = slices.Insert(b.keys, i, key)
	}
	b.objs[key] = o
	return o.etag, nil
}

// Delete removes the object at key.
func (b *MemBackend) Delete(_ context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objs[key]; !ok {
		return nil
	}
	delete(b.objs, key)
	if i, found := slices.BinarySearch(b.keys, key); found {
		b.keys = slices.Delete(b.keys, i, i+1)
	}
	return nil
}

// List yields the objects below prefix after startAfter, a page at a time
// from snapshots taken under the lock (yield may call the backend), as
// S3 pages a listing: a caller that stops early copies one page.
func (b *MemBackend) List(_ context.Context, prefix, startAfter string, yield func(Entry) (bool, error)) error {
	for {
		es := b.listPage(prefix, startAfter)
		for _, e := range es {
			if more, err := yield(e); err != nil || !more {
				return err
			}
		}
		if len(es) < memListPage {
			return nil
		}
		startAfter = es[len(es)-1].Key
	}
}

// memListPage is how many keys a page of MemBackend.List copies.
const memListPage = 1000

// listPage returns up to memListPage objects below prefix after startAfter.
func (b *MemBackend) listPage(prefix, startAfter string) []Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, _ := slices.BinarySearch(b.keys, max(prefix, startAfter))
	var es []Entry
	for ; i < len(b.keys) && strings.HasPrefix(b.keys[i], prefix) && len(es) < memListPage; i++ {
		if k := b.keys[i]; k > startAfter {
			es = append(es, Entry{Key: k, Size: int64(len(b.objs[k].body))})
		}
	}
	return es
}

// Folders returns the folders right below prefix: keys below a prefix
// are adjacent in sorted order, and so are those below each folder.
func (b *MemBackend) Folders(_ context.Context, prefix string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var dirs []string
	i, _ := slices.BinarySearch(b.keys, prefix)
	for ; i < len(b.keys) && strings.HasPrefix(b.keys[i], prefix); i++ {
		d, _, ok := strings.Cut(b.keys[i][len(prefix):], "/")
		if ok && (len(dirs) == 0 || dirs[len(dirs)-1] != d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, nil
}

// Now returns the backend's clock, in UTC.
func (b *MemBackend) Now(context.Context) (time.Time, error) { return utc(b.now()), nil }

// Expired reports whether the clock has reached t.
func (b *MemBackend) Expired(_ context.Context, t time.Time) (bool, error) {
	return !t.After(b.now()), nil
}
