package files

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/objstore"
)

// MissingSourceError is a file source whose folder does not exist (and
// allow_missing is not set): a typo in path: must not look like a quiet
// day.
type MissingSourceError struct {
	Ctx  string
	Path string // as the job file gives it
	Err  error  // the store's, naming the folder
}

func (e *MissingSourceError) Error() string {
	return fmt.Sprintf("source %s: path %q: %v; check path:, or set allow_missing: true for a folder that appears later",
		e.Ctx, e.Path, e.Err)
}

func (e *MissingSourceError) Unwrap() error { return e.Err }

// checkRoot fails a source whose root folder does not exist, unless
// allow_missing is set; then it reports the root as missing. Stores without
// a root of their own (S3 prefixes) pass; warnings says when they list
// nothing.
func (s *Source) checkRoot(ctx context.Context) (missing bool, err error) {
	rc, ok := s.objs.(objstore.RootChecker)
	if !ok {
		return false, nil
	}
	err = rc.CheckRoot(ctx)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, objstore.ErrNotExist) && s.cfg.AllowMissing:
		return true, nil
	case errors.Is(err, objstore.ErrNotExist):
		return false, &MissingSourceError{Ctx: s.spec.Ctx, Path: s.cfg.Path, Err: err}
	}
	return false, fmt.Errorf("source %s: %w", s.spec.Ctx, err)
}

// traced returns ctx with a ListTrace that keeps what the listing reports.
func (s *Source) traced(ctx context.Context) context.Context {
	return objstore.WithListTrace(ctx, &objstore.ListTrace{
		Skipped:    func(key, why string) { s.skipped = append(s.skipped, key+": "+why) },
		ServerTime: func(at time.Time) { s.serverTime = at },
	})
}

// maxNamed caps the entries one warning names.
const maxNamed = 10

// warnings says what the source's listings left out, and that a store
// without folders listed nothing at all.
func (s *Source) warnings() []string {
	var out []string
	for i, sk := range s.skipped {
		if i == maxNamed {
			out = append(out, fmt.Sprintf("%d more entries of %s skipped", len(s.skipped)-maxNamed, s.location))
			break
		}
		out = append(out, "skipped "+sk)
	}
	if _, hasRoot := s.objs.(objstore.RootChecker); !hasRoot && s.listings > 0 && s.listed == 0 && !s.cfg.AllowMissing {
		// S3 has no folders: an empty prefix and a mistyped one look the same.
		out = append(out, fmt.Sprintf("0 objects under %s: check path: for a typo (a prefix that does not exist cannot be told from an empty one); set allow_missing: true if it is often empty", s.location))
	}
	return out
}

// timestampWarnings names the files read from the future and a mark left
// in the future by an earlier version or a clock set back.
func timestampWarnings(p *Plan, listedAt time.Time) {
	if fut := bookmark.Future(p.Take, listedAt); len(fut) > 0 {
		p.Future = int64(len(fut))
		names := make([]string, 0, min(len(fut), maxNamed))
		for i, f := range fut {
			if i == maxNamed {
				names = append(names, fmt.Sprintf("and %d more", len(fut)-maxNamed))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s)", f.Path, f.ModTime().Format(time.RFC3339)))
		}
		what := "1 file has"
		if len(fut) > 1 {
			what = fmt.Sprintf("%d files have", len(fut))
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf(
			"%s a modification time in the future (more than %v after the listing's clock, %s): %s; read now, and the high-water mark stays at the listing time so that files landing later are still read",
			what, bookmark.ClockSkew, listedAt.UTC().Format(time.RFC3339), strings.Join(names, ", ")))
	}
	if hw := time.Unix(0, p.prev.HighWater); p.prev.HighWater != 0 && hw.After(listedAt.Add(bookmark.ClockSkew)) {
		p.Warnings = append(p.Warnings, fmt.Sprintf(
			"the high-water mark %s is in the future (the listing's clock is %s): files older than the mark minus max_band are skipped until then; it was left by an earlier version of tidemark or a clock set back: `tidemark bookmark reset` re-reads the source",
			hw.UTC().Format(time.RFC3339), listedAt.UTC().Format(time.RFC3339)))
	}
}
