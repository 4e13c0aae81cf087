package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/internal/par"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
)

// downloadPartSize is the ranged-GET part size for large inputs.
const downloadPartSize = 16 << 20

// fetch copies the plan's remote inputs that the engine cannot read itself
// into the run's spill folder, env.Concurrency objects
// at a time (large objects in parallel ranges), and returns the local path
// of each file of Take (local stores' files are read in place). The planned
// identity is replaced by the one actually read, so the bookmark records
// what the run saw. An object that changed while it was downloaded (its
// parts would come from two versions) is dropped from the run and counted,
// as a local file that changed while the engine read it.
func (p *Plan) fetch(ctx context.Context, env source.Env) ([]string, error) {
	locals := make([]string, len(p.Take))
	var jobs []func(context.Context) error
	var files, bytes int64
	var mu sync.Mutex
	changed := map[int]bool{}
	direct := env.Caps.Reads(objstore.Scheme(p.src.location))
	for j, f := range p.Take {
		if lp, ok := p.src.objs.LocalPath(f.Path); ok {
			locals[j] = lp
			continue
		}
		if direct {
			// The engine reads the store itself: it is handed the object's
			// URL, and the run records the identity the listing gave.
			locals[j] = layout.Join(p.src.location, f.Path)
			continue
		}
		dir, err := env.TempDir()
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(dir, p.Ctx, filepath.FromSlash(f.Path))
		locals[j] = dst
		files++
		bytes += f.Size
		jobs = append(jobs, func(ctx context.Context) error {
			got, err := download(ctx, p.src.objs, f, dst)
			if errors.Is(err, objstore.ErrChanged) {
				mu.Lock()
				defer mu.Unlock()
				changed[j] = true
				return nil
			}
			if err != nil {
				return fmt.Errorf("source %s: reading %s: %w", p.Ctx, layout.Join(p.src.location, f.Path), err)
			}
			p.Take[j] = got
			if env.Progress != nil {
				env.Progress.Add(1, got.Size)
			}
			return nil
		})
	}
	if len(jobs) == 0 {
		return locals, nil
	}
	if env.Progress != nil {
		env.Progress.Phase("downloading", files, bytes)
		defer env.Progress.Done()
	}
	env.Log.Info("downloading inputs", "source", p.Ctx, "files", files, "bytes", bytes, "concurrency", env.Concurrency)
	start := time.Now()
	if err := par.Do(ctx, env.Concurrency, jobs); err != nil {
		return nil, err
	}
	if len(changed) > 0 {
		paths := map[string]bool{}
		var kept []string
		for j, f := range p.Take {
			if changed[j] {
				paths[f.Path] = true
			} else {
				kept = append(kept, locals[j])
			}
		}
		locals = kept
		p.dropChanged(paths, env.Log)
	}
	env.Log.Info("downloaded inputs", "source", p.Ctx, "files", files, "seconds", fmt.Sprintf("%.2f", time.Since(start).Seconds()))
	return locals, nil
}

// download copies one object to dst and returns the identity it read.
func download(ctx context.Context, objs objstore.Store, f bookmark.File, dst string) (bookmark.File, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return f, err
	}
	if d, ok := objs.(objstore.Downloader); ok && f.Size > downloadPartSize {
		o, err := d.Download(ctx, f.Path, dst, 4, downloadPartSize)
		if err != nil {
			return f, err
		}
		return readIdentity(ctx, objs, f, o)
	}
	if vo, ok := objs.(objstore.VersionOpener); ok {
		in, o, err := vo.OpenVersion(ctx, f.Path)
		if err != nil {
			return f, err
		}
		defer in.Close()
		if err := copyTo(dst, in); err != nil {
			return f, err
		}
		return readIdentity(ctx, objs, f, o)
	}
	in, err := objs.Open(ctx, f.Path)
	if err != nil {
		return f, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return f, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f, err
	}
	if n != f.Size {
		// Replaced since listing: record what was read, not what was listed.
		if o, serr := objs.Stat(ctx, f.Path); serr == nil {
			return bookmark.File{Path: f.Path, Size: o.Size, MTime: o.ModTime.UnixNano(), ETag: o.ETag}, nil
		}
		f.Size = n
	}
	return f, nil
}

// readIdentity is the identity to record for an object planned as f and
// read, whole and from one version, as o. The version planned keeps its
// listed identity: the next run compares with a listing, whose
// LastModified may be finer than a GET's (seconds in an HTTP date; some
// stores list milliseconds). Another version is looked up in a listing of
// its key, to be recorded as the next run will list it; if the listing
// shows yet another version, or none, the version read is recorded as the
// GET said (the next run sees the key as modified, or gone).
func readIdentity(ctx context.Context, objs objstore.Store, f bookmark.File, o objstore.Object) (bookmark.File, error) {
	if o.Size == f.Size && o.ETag != "" && o.ETag == f.ETag {
		return f, nil
	}
	read := bookmark.File{Path: f.Path, Size: o.Size, MTime: o.ModTime.UnixNano(), ETag: o.ETag}
	for l, err := range objs.List(ctx, f.Path) {
		if err != nil {
			return f, err
		}
		if l.Key == f.Path && l.Size == o.Size && l.ETag == o.ETag {
			read.MTime = l.ModTime.UnixNano()
		}
		break // the key sorts first among those it prefixes
	}
	return read, nil
}

// copyTo copies r into a new file at dst.
func copyTo(dst string, r io.Reader) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
