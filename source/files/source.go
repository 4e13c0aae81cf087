package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
)

// Source is one opened file source (source.Source).
type Source struct {
	spec     job.Source
	job      *job.Spec
	cfg      *Config // spec's block (a catalog source's: with the table's format and options)
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
	// cat is a catalog source's table, once resolved (see catalog.go).
	cat *catalogRead
}

// Open opens a file source of the job spec. It touches nothing (the
// store is opened, not listed).
func Open(ctx context.Context, spec *job.Spec, src job.Source) (*Source, error) {
	fc, ok := src.Config.(*Config)
	if !ok {
		return nil, fmt.Errorf("source %s: not a file source", src.Ctx)
	}
	m, err := newMatcher(fc.Include, fc.Exclude)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
	}
	if fc.Catalog != "" {
		// Its table is read when the run plans (resolveCatalog).
		return &Source{spec: src, job: spec, cfg: fc, match: m}, nil
	}
	loc := spec.Resolve(fc.Path)
	objs, err := objstore.Open(ctx, loc, fc.S3)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
	}
	return &Source{spec: src, job: spec, cfg: fc, location: loc, objs: objs, match: m}, nil
}

// list yields the source's input files in key order. Files under a
// folder below the source's root that holds a _tidemark/ entry are a
// tidemark sink's output (another job's, nested in the source folder) and
// are left out and counted.
func (s *Source) list(ctx context.Context) iter.Seq2[bookmark.File, error] {
	return func(yield func(bookmark.File, error) bool) {
		ctx := s.traced(ctx)
		s.listings++
		s.inSinks, s.sinkDirs = 0, nil
		objs := s.objs.List(ctx, "")
		if s.cat != nil && s.cat.prefixes != nil {
			objs = s.listPartitions(ctx)
		} else if fs, ok := s.objs.(objstore.FolderSkipper); ok {
			objs = fs.ListSkipping(ctx, layout.MetaDir, func(dir string, _ objstore.Object) {
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
func (s *Source) fingerprint() (sum, describe string) {
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
	if s.cfg.Catalog != "" {
		// The table's location, format and options are the path, format
		// and options above: a new version that only adds columns is the
		// same source, one that moves the table is not.
		d["catalog"] = s.cfg.Catalog
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

var _ source.Source = (*Source)(nil)

// Ctx is the source's ctx.
func (s *Source) Ctx() string { return s.spec.Ctx }

// Close releases nothing: a file source holds no connection.
func (s *Source) Close() error { return nil }

// CheckDefinition compares the source's fingerprint with the one prev was
// written for.
func (s *Source) CheckDefinition(_ context.Context, prev bookmark.SourceState) error {
	if s.cfg.Catalog != "" && s.cat == nil {
		return nil // told by Plan, once the table is read
	}
	if fp, doc := s.fingerprint(); !sameSource(prev, fp) {
		return &source.ChangedError{Ctx: s.spec.Ctx, Was: prev.Describe, Now: doc}
	}
	return nil
}

func init() {
	source.Register(source.Kind{Name: source.KindFiles, Anchor: "path", Noun: "file sources (path:)",
		Records: bookmark.KindFiles, Count: bookmark.DecodeAs[CountDetail](),
		// A file source's state is all core: its detail holds nothing.
		State:  func([]byte) (bookmark.Detail, error) { return StateDetail{}, nil },
		Config: func() job.Config { return new(Config) },
		Open: func(ctx context.Context, spec *job.Spec, src job.Source) (source.Source, error) {
			return Open(ctx, spec, src)
		}})
}
