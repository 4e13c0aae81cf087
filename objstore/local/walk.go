package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
func (s *Store) walk(ctx context.Context, root string, fn fs.WalkDirFunc) error {
	w := &walker{s: s, ctx: ctx, fn: fn, roots: map[string]string{}, files: map[string]string{}}
	err := w.run(root)
	if errors.Is(err, fs.SkipDir) || errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

type walker struct {
	s     *Store
	ctx   context.Context
	fn    fs.WalkDirFunc
	roots map[string]string // real path of every tree walked -> the path it was walked under
	files map[string]string // real path of every file reached through a link -> that link's path
	links []link            // links to folders, in the order found, not yet followed
	flink []link            // links to files, followed after every folder
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
	if err := w.dir(root, real, fs.FileInfoToDirEntry(info)); err != nil {
		return err
	}
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
		if err := w.entries(l.path, l.real, d); err != nil && !errors.Is(err, fs.SkipDir) {
			return err
		}
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
	}
	return nil
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
func (w *walker) key(path string) string {
	rel, err := filepath.Rel(w.s.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

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
