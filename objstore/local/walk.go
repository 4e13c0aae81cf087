package local

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/tidemark-etl/tidemark/objstore"
)

// walk is filepath.WalkDir that follows symlinks: fn sees a symlinked
// folder as a folder (its files under the link's path) and a symlinked file
// as a file whose Info is its target's (size, mtime), as if the links were
// what they point to. Paths are the paths through the links, so keys stay
// those a user sees.
//
// Every folder and file is walked once, whatever links lead to it, so a
// listing never yields the same bytes under two keys and never loops:
//   - the plain tree is walked first; a link is followed afterwards, and
//     only when its target lies outside every tree walked so far;
//   - a link to a folder that contains it (an ancestor: a loop) or to
//     anything else already walked (`latest.csv -> 2026-11-29.csv`) is not
//     followed, and neither is a folder reached again by its own path;
//   - a dangling link (or a chain of links that does not end) is skipped.
//
// Each entry left out is reported through the context's ListTrace
// (objstore.ReportSkipped), except for hidden names, which List never
// yields anyway. fn may return fs.SkipDir and fs.SkipAll as for WalkDir.
//
// Each folder's entries are walked in the byte order of their keys (a
// folder's name sorts as name+"/"), so the plain tree reaches fn in key
// order and a listing can stream it; the order is lost from the first
// symlink to follow on, which the walk reports to hooks.linked. Links are
// still followed in the order a walk in name order found them, so which
// of two links to one target lists it does not depend on this order.
func (s *Store) walk(ctx context.Context, root string, fn fs.WalkDirFunc, hooks walkHooks) error {
	w := &walker{s: s, ctx: ctx, fn: fn, hooks: hooks, roots: map[string]string{}, files: map[string]string{}}
	err := w.run(root)
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// walkHooks let a listing follow the walk: both may be nil.
type walkHooks struct {
	// folder is called with every folder fn accepted and its entries,
	// before any of them reaches fn.
	folder func(path string, ents []fs.DirEntry)
	// linked is called when the walk first records a symlink it may
	// follow: fn's calls are in key order only until then.
	linked func()
}

type walker struct {
	s     *Store
	ctx   context.Context
	fn    fs.WalkDirFunc
	hooks walkHooks
	// linked: a symlink to follow has been recorded (hooks.linked called).
	linked bool
	roots  map[string]string // real path of every tree walked -> the path it was walked under
	files  map[string]string // real path of every file reached through a link -> that link's path
	links  []link            // links to folders, in the order found, not yet followed
	flink  []link            // links to files, followed after every folder
}

// link is a symlink met in the walk, resolved.
type link struct {
	path   string      // the link's own path (through earlier links)
	real   string      // its target, every link resolved
	parent string      // the real path of the folder holding it
	info   fs.FileInfo // the target's
}

func (w *walker) run(root string) error {
	info, err := os.Stat(root)
	if err != nil {
		return w.fn(root, nil, err)
	}
	if !info.IsDir() {
		return w.fn(root, fs.FileInfoToDirEntry(info), nil)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return w.fn(root, nil, err)
	}
	real, _ = filepath.Abs(real)
	w.roots[real] = root
	found, foundFiles := len(w.links), len(w.flink)
	if err := w.dir(root, real, fs.FileInfoToDirEntry(info)); err != nil {
		return err
	}
	w.inFoundOrder(found, foundFiles)
	// Links to folders, breadth first: a followed folder may hold more.
	for len(w.links) > 0 {
		l := w.links[0]
		w.links = w.links[1:]
		d := linkEntry{name: filepath.Base(l.path), info: l.info}
		if err := w.fn(l.path, d, nil); err != nil {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			return err
		}
		if why := w.walked(l); why != "" {
			w.skip(l.path, why)
			continue
		}
		w.roots[l.real] = l.path
		found, foundFiles := len(w.links), len(w.flink)
		if err := w.entries(l.path, l.real, d); err != nil && !errors.Is(err, fs.SkipDir) {
			return err
		}
		w.inFoundOrder(found, foundFiles)
	}
	for _, l := range w.flink {
		if why := w.walked(l); why != "" {
			w.skip(l.path, why)
			continue
		}
		if prev, ok := w.files[l.real]; ok {
			w.skip(l.path, fmt.Sprintf("symlink to %s, which is already listed as %s: not read twice", l.real, w.key(prev)))
			continue
		}
		w.files[l.real] = l.path
		if err := w.fn(l.path, linkEntry{name: filepath.Base(l.path), info: l.info}, nil); err != nil && !errors.Is(err, fs.SkipDir) {
			return err
		}
	}
	return nil
}

// dir hands a folder to fn and walks it unless fn skips it.
func (w *walker) dir(path, real string, d fs.DirEntry) error {
	if err := w.fn(path, d, nil); err != nil {
		return err
	}
	return w.entries(path, real, d)
}

// entries walks the entries of a folder fn has accepted.
func (w *walker) entries(path, real string, d fs.DirEntry) error {
	ents, err := os.ReadDir(path)
	if err != nil {
		return w.fn(path, d, err)
	}
	if !slices.IsSortedFunc(ents, byKey) { // sorted by name: only a folder "a" beside "a.b" or "a-b" moves
		slices.SortFunc(ents, byKey)
	}
	if w.hooks.folder != nil {
		w.hooks.folder(path, ents)
	}
	for _, e := range ents {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		p, r := filepath.Join(path, e.Name()), filepath.Join(real, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if err := w.resolve(p, real); err != nil {
				return err
			}
		case e.IsDir():
			if prev, ok := w.roots[r]; ok {
				// A tree a link led to earlier, reached now by its own path.
				w.skip(p, fmt.Sprintf("folder already listed as %s (through a symlink): not read twice", w.key(prev)))
				continue
			}
			if err := w.dir(p, r, e); err != nil && !errors.Is(err, fs.SkipDir) {
				return err
			}
		default:
			if err := w.fn(p, e, nil); err != nil {
				if errors.Is(err, fs.SkipDir) {
					return nil
				}
				return err
			}
		}
	}
	return nil
}

// resolve records a symlink for later, or reports why it cannot be read.
func (w *walker) resolve(path, parent string) error {
	info, err := os.Stat(path)
	var real string
	if err == nil {
		real, err = filepath.EvalSymlinks(path)
	}
	if err == nil {
		real, err = filepath.Abs(real)
	}
	dest, _ := os.Readlink(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.skip(path, fmt.Sprintf("symlink to %s, which does not exist (it is read once it resolves)", dest))
		return nil
	case errors.Is(err, syscall.ELOOP):
		w.skip(path, fmt.Sprintf("symlink to %s, which does not resolve (a loop of symlinks)", dest))
		return nil
	case err != nil:
		return w.fn(path, nil, err)
	}
	l := link{path: path, real: real, parent: parent, info: info}
	switch {
	case info.IsDir():
		w.links = append(w.links, l)
	case info.Mode().IsRegular():
		w.flink = append(w.flink, l)
	default:
		w.skip(path, fmt.Sprintf("symlink to %s, %s, not a regular file: not read", real, fileKind(info.Mode())))
		return nil
	}
	if !w.linked {
		w.linked = true
		if w.hooks.linked != nil {
			w.hooks.linked()
		}
	}
	return nil
}

// inFoundOrder puts the links that one tree's walk recorded (those from
// the indexes given on) in the order a walk taking each folder's entries
// in name order meets them: path by path, comparing names.
func (w *walker) inFoundOrder(links, files int) {
	slices.SortStableFunc(w.links[links:], func(a, b link) int { return byNames(a.path, b.path) })
	slices.SortStableFunc(w.flink[files:], func(a, b link) int { return byNames(a.path, b.path) })
}

// byNames orders paths as a walk in name order meets them: by their first
// name, then the next, so "a/z" comes before "a.b" ('/' ranks before every
// byte of a name).
func byNames(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		switch {
		case x == filepath.Separator:
			return -1
		case y == filepath.Separator:
			return 1
		}
		return cmp.Compare(x, y)
	}
	return cmp.Compare(len(a), len(b))
}

// byKey orders a folder's entries as their keys sort: a folder's name as
// name+"/", so "a.b" comes before the folder "a" and what it holds.
func byKey(a, b fs.DirEntry) int {
	x, y := a.Name(), b.Name()
	n := min(len(x), len(y))
	if c := strings.Compare(x[:n], y[:n]); c != 0 {
		return c
	}
	// One name is the other's prefix: what follows it in its key is '/'
	// for a folder, nothing for a file.
	next := func(name string, dir bool) int {
		switch {
		case len(name) > n:
			return int(name[n])
		case dir:
			return '/'
		}
		return -1
	}
	return cmp.Compare(next(x, a.IsDir()), next(y, b.IsDir()))
}

// fileKind names what a file that is neither a folder nor a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// walked says why l's target is already walked ("" if it is not).
func (w *walker) walked(l link) string {
	if l.info.IsDir() && within(l.parent, l.real) {
		return fmt.Sprintf("symlink to %s, a folder that contains it: a loop, not followed", l.real)
	}
	// The innermost tree holding the target is the one that listed it (an
	// outer one skipped the inner tree when it met it).
	owner := ""
	for real := range w.roots {
		if within(l.real, real) && len(real) > len(owner) {
			owner = real
		}
	}
	if owner == "" {
		return ""
	}
	rel, _ := filepath.Rel(owner, l.real)
	return fmt.Sprintf("symlink to %s, which is listed as %s: not followed, so it is not read twice",
		l.real, w.key(filepath.Join(w.roots[owner], rel)))
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// skip reports an entry left out, unless its name is hidden.
func (w *walker) skip(path, why string) {
	if hidden(filepath.Base(path)) {
		return
	}
	objstore.ReportSkipped(w.ctx, w.key(path), why)
}

// key is path as a key of the store.
func (w *walker) key(path string) string { return w.s.key(path) }

// linkEntry is a followed symlink as fn sees it: its own name, its target's
// type and metadata.
type linkEntry struct {
	name string
	info fs.FileInfo
}

func (e linkEntry) Name() string               { return e.name }
func (e linkEntry) IsDir() bool                { return e.info.IsDir() }
func (e linkEntry) Type() fs.FileMode          { return e.info.Mode().Type() }
func (e linkEntry) Info() (fs.FileInfo, error) { return e.info, nil }
