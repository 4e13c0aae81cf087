package tidemark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	"iter"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
)

// resolvePath turns a job-file path into a location: URLs stay as they are,
// local paths are made absolute against the job file's folder.
func resolvePath(spec *job.Spec, p string) string {
	if strings.Contains(p, "://") {
		if strings.HasPrefix(p, "file://") {
			return resolvePath(spec, strings.TrimPrefix(p, "file://"))
		}
		return p
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(spec.Dir, p)
	}
	return filepath.Clean(p)
}

// fileSource is one opened file source.
type fileSource struct {
	spec     job.Source
	cfg      *srcfiles.Config // spec's block
	location string
	objs     objstore.Store
	match    *matcher
	// What the listings said besides the files (see sourcecheck.go).
	listings   int       // full listings made
	listed     int64     // objects they yielded, before the globs
	skipped    []string  // entries they left out, "key: why"
	serverTime time.Time // the store's clock at the last listing, if it told
	// inSinks counts the files of the last listing that lie in another
	// sink's folder below the source's root, left unread; sinkDirs names
	// the first few of those folders.
	inSinks  int64
	sinkDirs []string
}

func openSource(ctx context.Context, spec *job.Spec, src job.Source) (*fileSource, error) {
	fc := fileConfig(src)
	loc := resolvePath(spec, fc.Path)
	objs, err := objstore.Open(ctx, loc, fc.S3)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
	}
	m, err := newMatcher(fc.Include, fc.Exclude)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
	}
	return &fileSource{spec: src, cfg: fc, location: loc, objs: objs, match: m}, nil
}

// list yields the source's input files in key order. Files under a
// folder below the source's root that holds a _tidemark/ entry are a
// tidemark sink's output (another job's, nested in the source folder) and
// are left out and counted.
func (s *fileSource) list(ctx context.Context) iter.Seq2[bookmark.File, error] {
	return func(yield func(bookmark.File, error) bool) {
		ctx := s.traced(ctx)
		s.listings++
		s.inSinks, s.sinkDirs = 0, nil
		objs := s.objs.List(ctx, "")
		if fs, ok := s.objs.(objstore.FolderSkipper); ok {
			objs = fs.ListSkipping(ctx, metaDir, func(dir string, _ objstore.Object) {
				s.inSinks++
				if n := len(s.sinkDirs); n < 3 && (n == 0 || s.sinkDirs[n-1] != dir) {
					s.sinkDirs = append(s.sinkDirs, dir)
				}
			})
		}
		for o, err := range objs {
			if err != nil {
				yield(bookmark.File{}, fmt.Errorf("source %s: %w", s.spec.Ctx, err))
				return
			}
			s.listed++
			if !s.match.match(o.Key) {
				continue
			}
			if !yield(bookmark.File{Path: o.Key, Size: o.Size, MTime: o.ModTime.UnixNano(), ETag: o.ETag}, nil) {
				return
			}
		}
	}
}

// fingerprint identifies what a source reads: a change of path, format,
// options, globs or tracking under the same ctx is reported, not silently
// re-read or skipped.
func (s *fileSource) fingerprint() (sum, describe string) {
	opts := make([]string, 0, len(s.cfg.Options))
	for k, v := range s.cfg.Options {
		if !tuningOptions[strings.ToLower(k)] {
			opts = append(opts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(opts)
	d := map[string]any{
		"path":     s.location,
		"format":   s.cfg.Format,
		"options":  opts,
		"include":  s.cfg.Include,
		"exclude":  s.cfg.Exclude,
		"tracking": s.cfg.Tracking,
		"hive":     *s.cfg.HivePartitioning,
	}
	b, _ := json.Marshal(d) // map keys are sorted
	return fingerprintOf(b), string(b)
}

func fingerprintOf(doc []byte) string {
	h := sha256.Sum256(doc)
	return hex.EncodeToString(h[:12])
}

// tuningOptions are reader options that bound or speed up reading without
// changing the records a file gives: changing one (raising max_line_size
// for a long line, say) is not a change of the source.
var tuningOptions = map[string]bool{"max_line_size": true, "maximum_object_size": true, "buffer_size": true, "parallel": true}

// sameSource reports whether a bookmark's source state was written for the
// source whose fingerprint is fp. A state written while tuning options were
// part of the fingerprint is compared without them, from its description.
func sameSource(prev bookmark.SourceState, fp string) bool {
	if prev.Fingerprint == fp {
		return true
	}
	var d map[string]any
	if json.Unmarshal([]byte(prev.Describe), &d) != nil {
		return false
	}
	opts, _ := d["options"].([]any)
	kept := make([]any, 0, len(opts))
	for _, o := range opts {
		name, _, _ := strings.Cut(fmt.Sprint(o), "=")
		if !tuningOptions[strings.ToLower(name)] {
			kept = append(kept, o)
		}
	}
	if len(kept) == len(opts) {
		return false
	}
	d["options"] = kept
	b, err := json.Marshal(d)
	return err == nil && fingerprintOf(b) == fp
}

// sinkLocation is where a sink writes, with its S3 settings (never
// credentials) as a query string, so the output manifests name a location
// that a roll-forward or purge can open without the job file.
func sinkLocation(spec *job.Spec, k job.Sink) string {
	kc := fileSinkConfig(k)
	return objstore.WithOptions(resolvePath(spec, kc.Path), kc.S3)
}
