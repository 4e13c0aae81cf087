package tidemark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/objstore"
)

// downloadPartSize is the ranged-GET part size for large inputs.
const downloadPartSize = 16 << 20

// fetchInputs copies the remote inputs of every plan into the spill folder,
// concurrency objects at a time (large objects in parallel ranges), and
// returns each plan's local paths. The planned identity is replaced by the
// one actually read, so the bookmark records what the run saw. An object
// that changed while it was downloaded (its parts would come from two
// versions) is dropped from the run and counted, as a local file that
// changed while the engine read it.
func (r *runner) fetchInputs(ctx context.Context) ([][]string, error) {
	locals := make([][]string, len(r.plans))
	var jobs []func(context.Context) error
	var files, bytes int64
	var mu sync.Mutex
	changed := map[int]map[int]bool{}
	for i, p := range r.plans {
		locals[i] = make([]string, len(p.Take))
		for j, f := range p.Take {
			if lp, ok := p.src.objs.LocalPath(f.Path); ok {
				locals[i][j] = lp
				continue
			}
			dir, err := r.inputDir()
			if err != nil {
				return nil, err
			}
			dst := filepath.Join(dir, p.Ctx, filepath.FromSlash(f.Path))
			locals[i][j] = dst
			files++
			bytes += f.Size
			jobs = append(jobs, func(ctx context.Context) error {
				got, err := download(ctx, p.src.objs, f, dst)
				if errors.Is(err, objstore.ErrChanged) {
					mu.Lock()
					defer mu.Unlock()
					if changed[i] == nil {
						changed[i] = map[int]bool{}
					}
					changed[i][j] = true
					return nil
				}
				if err != nil {
					return fmt.Errorf("source %s: reading %s: %w", p.Ctx, joinLoc(p.src.location, f.Path), err)
				}
				p.Take[j] = got
				if r.opts.Progress != nil {
					r.opts.Progress.Add(1, got.Size)
				}
				return nil
			})
		}
	}
	if len(jobs) == 0 {
		return locals, nil
	}
	if r.opts.Progress != nil {
		r.opts.Progress.Phase("downloading", files, bytes)
		defer r.opts.Progress.Done()
	}
	r.log.Info("downloading inputs", "files", files, "bytes", bytes, "concurrency", r.spec.IO.Concurrency)
	start := time.Now()
	if err := parallel(ctx, r.spec.IO.Concurrency, jobs); err != nil {
		return nil, err
	}
	for i, idx := range changed {
		p := r.plans[i]
		paths := map[string]bool{}
		var kept []string
		for j, f := range p.Take {
			if idx[j] {
				paths[f.Path] = true
			} else {
				kept = append(kept, locals[i][j])
			}
		}
		locals[i] = kept
		r.dropChanged(map[int]map[string]bool{i: paths}, r.planned)
	}
	r.log.Info("downloaded inputs", "files", files, "seconds", fmt.Sprintf("%.2f", time.Since(start).Seconds()))
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

// inputDir is the run's spill folder for remote inputs, made on first use.
func (r *runner) inputDir() (string, error) {
	if r.inDir != "" {
		return r.inDir, nil
	}
	dir, err := os.MkdirTemp(r.spillDir(), r.tempPrefix()+"in-")
	if err != nil {
		return "", fmt.Errorf("making spill folder: %w", err)
	}
	r.inDir = dir
	r.tmpDirs = append(r.tmpDirs, dir)
	return dir, nil
}

// parallel runs jobs, n at a time, and returns the first error (the others
// are cancelled).
func parallel(ctx context.Context, n int, jobs []func(context.Context) error) error {
	if n < 1 {
		n = 1
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	var failed atomic.Bool
	for _, job := range jobs {
		if failed.Load() {
			break
		}
		g.Go(func() error {
			if err := job(ctx); err != nil {
				failed.Store(true)
				return err
			}
			return nil
		})
	}
	return g.Wait()
}
