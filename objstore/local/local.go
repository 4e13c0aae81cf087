// Package local is the object store for local disks: plain paths and
// file:// URLs. Writes go to a temporary file that is fsynced and renamed.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/objstore"
)

func init() {
	objstore.Register("file", func(_ context.Context, location string, _ map[string]string) (objstore.Store, error) {
		return New(strings.TrimPrefix(location, "file://"))
	})
}

// Store is a folder on a local disk.
type Store struct {
	root string // absolute, cleaned
}

var (
	_ objstore.Store   = (*Store)(nil)
	_ objstore.Creator = (*Store)(nil)
)

// New returns a store rooted at dir (which need not exist yet).
func New(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", dir, err)
	}
	return &Store{root: abs}, nil
}

// Root returns the absolute folder.
func (s *Store) Root() string { return s.root }

func (s *Store) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

// LocalPath returns the file path of key.
func (s *Store) LocalPath(key string) (string, bool) { return s.path(key), true }

// hidden reports whether a path segment is one tidemark and other readers skip.
func hidden(name string) bool { return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") }

// List walks the folder under prefix and yields regular files in byte order
// of their keys, as the walk reaches them: it takes each folder's entries
// in key order (see walk), so the listing is not held in memory. Past the
// first symlink to follow (a tree may lead back in anywhere), what is left
// is collected and sorted before it is yielded. Symlinks are followed,
// each folder and file once (see walk); what is left out is reported
// through the context's objstore.ListTrace.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[objstore.Object, error] {
	return s.list(ctx, prefix, "", nil)
}

// ListSkipping is List(ctx, "") without the folders below the root that
// hold an entry named marker: the walk sees a folder's entries before it
// walks them, so it knows the folder is marked before its first file.
func (s *Store) ListSkipping(ctx context.Context, marker string, skipped func(string, objstore.Object)) iter.Seq2[objstore.Object, error] {
	return s.list(ctx, "", marker, skipped)
}

var _ objstore.FolderSkipper = (*Store)(nil)

func (s *Store) list(ctx context.Context, prefix, marker string, skipped func(string, objstore.Object)) iter.Seq2[objstore.Object, error] {
	return func(yield func(objstore.Object, error) bool) {
		var marked map[string]bool
		// Objects go to emit in key order until the walk meets a symlink
		// to follow; from then on to rest, sorted once the walk is done.
		var rest []objstore.Object
		collect, stopped := false, false
		emit := func(o objstore.Object) error {
			if collect {
				rest = append(rest, o)
				return nil
			}
			if dir, ok := objstore.MarkedFolder(o.Key, marked); ok {
				if skipped != nil {
					skipped(dir, o)
				}
				return nil
			}
			if !yield(o, nil) {
				stopped = true
				return fs.SkipAll
			}
			return nil
		}
		start := s.path(prefix)
		// A prefix may end inside a name ("2026-11-"): walk its folder and filter.
		walkRoot := start
		if !strings.HasSuffix(prefix, "/") && prefix != "" {
			walkRoot = filepath.Dir(start)
		}
		hooks := walkHooks{linked: func() { collect = true }}
		if marker != "" {
			hooks.folder = func(p string, ents []fs.DirEntry) {
				if !slices.ContainsFunc(ents, func(e fs.DirEntry) bool { return e.Name() == marker }) {
					return
				}
				if key := s.key(p); key != "." {
					if marked == nil {
						marked = map[string]bool{}
					}
					marked[key] = true
				}
			}
		}
		err := s.walk(ctx, walkRoot, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == walkRoot {
					return fs.SkipAll
				}
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			key := s.key(p)
			if p != walkRoot && hidden(d.Name()) && !strings.HasPrefix(prefix, key) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if !strings.HasPrefix(key, prefix) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // deleted while listing
				}
				return err
			}
			if !info.Mode().IsRegular() {
				objstore.ReportSkipped(ctx, key, fmt.Sprintf("%s, not a regular file: not read", fileKind(info.Mode())))
				return nil
			}
			return emit(objstore.Object{Key: key, Size: info.Size(), ModTime: info.ModTime()})
		}, hooks)
		if stopped {
			return
		}
		if err != nil {
			yield(objstore.Object{}, fmt.Errorf("listing %s: %w", start, err))
			return
		}
		slices.SortFunc(rest, func(a, b objstore.Object) int { return strings.Compare(a.Key, b.Key) })
		objstore.SkipMarked(rest, marked, skipped, yield)
	}
}

// key is the key of a path under the root.
func (s *Store) key(p string) string {
	rel, err := filepath.Rel(s.root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// CheckRoot reports a root folder that does not exist, saying where a
// dangling symlink points.
func (s *Store) CheckRoot(context.Context) error {
	_, err := os.Stat(s.root)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if dest, lerr := os.Readlink(s.root); lerr == nil {
		return missingRoot(fmt.Sprintf("%s is a symlink to %s, which does not exist", s.root, dest))
	}
	return missingRoot(fmt.Sprintf("%s does not exist", s.root))
}

// missingRoot is CheckRoot's error: it says what is missing and is
// objstore.ErrNotExist.
type missingRoot string

func (e missingRoot) Error() string        { return string(e) }
func (e missingRoot) Is(target error) bool { return target == objstore.ErrNotExist }

var _ objstore.RootChecker = (*Store)(nil)

// Stat returns one file's metadata.
func (s *Store) Stat(_ context.Context, key string) (objstore.Object, error) {
	info, err := os.Stat(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return objstore.Object{}, fmt.Errorf("%s: %w", s.path(key), objstore.ErrNotExist)
	}
	if err != nil {
		return objstore.Object{}, err
	}
	return objstore.Object{Key: key, Size: info.Size(), ModTime: info.ModTime()}, nil
}

// Open opens one file.
func (s *Store) Open(_ context.Context, key string) (io.ReadCloser, error) {
	f, err := os.Open(s.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", s.path(key), objstore.ErrNotExist)
	}
	return f, err
}

// Put writes key through a temporary file, fsync and rename.
func (s *Store) Put(_ context.Context, key string, r io.Reader) error {
	dst := s.path(key)
	tmp, err := writeTemp(dst, r)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Rename(tmp, dst)
}

// writeTemp writes r to a new temporary file beside dst (making dst's
// folder), synced and closed, readable by all as the engine's output
// files are (os.CreateTemp alone would make it private to this user).
func writeTemp(dst string, r io.Reader) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-"+filepath.Base(dst)+"-*")
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fail(err)
	}
	if _, err := io.Copy(tmp, r); err != nil {
		return fail(fmt.Errorf("writing %s: %w", dst, err))
	}
	if err := tmp.Sync(); err != nil {
		return fail(fmt.Errorf("syncing %s: %w", dst, err))
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// Create writes key through a temporary file, fsync and a hard link,
// which fails if key exists: ErrExists.
func (s *Store) Create(_ context.Context, key string, r io.Reader) error {
	dst := s.path(key)
	tmpName, err := writeTemp(dst, r)
	if err != nil {
		return err
	}
	defer os.Remove(tmpName)
	err = hardLink(tmpName, dst)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links (FAT, many FUSE and SMB
		// mounts): create the key exclusively and write it in place; a
		// reader racing the write can see it short.
		err = createExclusive(tmpName, dst)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating %s: %w", dst, objstore.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	return syncDir(filepath.Dir(dst))
}

// hardLink is os.Link; tests replace it to act as a file system without hard
// links.
var hardLink = os.Link

// createExclusive copies the file src to dst, which must not exist
// (fs.ErrExist if it does), and syncs it.
func createExclusive(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(dst)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(dst)
		return err
	}
	return f.Close()
}

// Move renames a file, creating the target's folder. If from is gone and to
// exists, the move already happened.
func (s *Store) Move(_ context.Context, from, to string) error {
	src, dst := s.path(from), s.path(to)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	err := os.Rename(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dst); serr == nil {
			return nil
		}
		return fmt.Errorf("moving %s: %w", src, objstore.ErrNotExist)
	}
	if err != nil {
		return fmt.Errorf("moving %s to %s: %w", src, dst, err)
	}
	return syncDir(filepath.Dir(dst))
}

// Delete removes a file and then any folders it leaves empty up to the root.
func (s *Store) Delete(_ context.Context, key string) error {
	p := s.path(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting %s: %w", p, err)
	}
	for dir := filepath.Dir(p); dir != s.root && strings.HasPrefix(dir, s.root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty, or gone
			break
		}
	}
	return nil
}

// DeletePrefix removes everything under prefix, which must name a folder.
func (s *Store) DeletePrefix(_ context.Context, prefix string) error {
	p := s.path(prefix)
	if p == s.root {
		return fmt.Errorf("refusing to delete the whole store root %s", s.root)
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("deleting %s: %w", p, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync() // best effort: not every file system supports it
	return nil
}
