package files

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
)

// ModifiedFileError is on_modified: fail meeting a modified file.
type ModifiedFileError struct {
	Ctx      string
	Path     string
	Old, New bookmark.File
}

func (e *ModifiedFileError) Error() string {
	return fmt.Sprintf("source %s: %s was modified since it was processed (size %d -> %d, mtime %s -> %s) and on_modified is fail",
		e.Ctx, e.Path, e.Old.Size, e.New.Size,
		e.Old.ModTime().Format(time.RFC3339Nano), e.New.ModTime().Format(time.RFC3339Nano))
}

// Plan is what one file source's run reads (source.Plan).
type Plan struct {
	Ctx string
	// Take is the files the run reads, oldest first.
	Take []bookmark.File
	// Superseded are the recorded versions of modified files in Take.
	Superseded []bookmark.File
	// Counts of what the listing held besides Take.
	Unchanged, Modified, IgnoredModified, Deferred int64
	// Future counts the files in Take from the future (timestamp tracking).
	Future int64
	// RootMissing: the source folder does not exist (allow_missing: true).
	RootMissing bool
	// Warnings are what a user must hear of: entries the listing skipped,
	// an S3 prefix holding nothing, files from the future.
	Warnings []string

	src       *Source
	prev      bookmark.SourceState
	hasPrev   bool
	fp, fpDoc string
	listedAt  time.Time // timestamp tracking: the clock of the listing
	// What went missing or changed while the run read the plan.
	missing []string
	changed int64
	// A batch of a split plan (batch.go): base is the batch before it,
	// whose committed state (next, set by Advance) this one starts from;
	// tail marks every batch but the first, which counts the listing.
	base *Plan
	next *bookmark.SourceState
	tail bool
}

// bounds are a source's per-run limits, the disk budget included for
// remote sources.
func bounds(in source.Request, fs *Source) bookmark.Bounds {
	b := bookmark.Bounds{Files: fs.cfg.BoundedFiles, Bytes: fs.cfg.BoundedSize.Bytes}
	if _, local := fs.objs.LocalPath(""); !local && in.DiskBudget > 0 && (b.Bytes == 0 || in.DiskBudget < b.Bytes) {
		b.Bytes = in.DiskBudget
	}
	return b
}

// Plan lists the source and decides what the run reads.
func (fs *Source) Plan(ctx context.Context, in source.Request) (source.Plan, error) {
	return fs.PlanFiles(ctx, in)
}

// PlanFiles is Plan with the file source's own plan type.
func (fs *Source) PlanFiles(ctx context.Context, in source.Request) (*Plan, error) {
	if err := fs.resolveCatalog(ctx, in); err != nil {
		return nil, err
	}
	src, st, jobName := fs.spec, in.State, in.Job
	p := &Plan{Ctx: src.Ctx, src: fs, prev: in.Prev, hasPrev: in.HasPrev}
	p.fp, p.fpDoc = fs.fingerprint()
	if p.hasPrev && !sameSource(p.prev, p.fp) && in.Mode != bookmark.ModeDisable && !in.AllowChange {
		return nil, &source.ChangedError{Ctx: src.Ctx, Was: p.prev.Describe, Now: p.fpDoc}
	}
	if err := fs.listCatalog(ctx, in); err != nil {
		return nil, err
	}
	var err error
	if p.RootMissing, err = fs.checkRoot(ctx); err != nil {
		return nil, err
	}
	defer func() { p.Warnings = append(p.Warnings, fs.warnings()...) }()
	switch {
	case in.Mode == bookmark.ModeDisable:
		for f, err := range fs.list(ctx) {
			if err != nil {
				return nil, err
			}
			p.Take = append(p.Take, f)
		}
		p.Take, _ = bookmark.Limit(p.Take, bookmark.Bounds{})
		return p, nil
	case in.RangeRuns != nil:
		return p, planRange(ctx, st, jobName, fs, p, in.RangeRuns)
	case bookmark.Tracking(fs.cfg.Tracking) == bookmark.TrackTimestamp:
		ix := bookmark.NewBandIndex(p.prev)
		var cands []bookmark.File
		p.listedAt = time.Now() // unless the store tells its own clock
		for f, err := range fs.list(ctx) {
			if err != nil {
				return nil, err
			}
			if ix.Selects(p.prev, fs.cfg.MaxBand.Duration, f) {
				cands = append(cands, f)
			} else {
				p.Unchanged++
			}
		}
		if !fs.serverTime.IsZero() {
			p.listedAt = fs.serverTime
		}
		var deferred []bookmark.File
		b := bounds(in, fs)
		b.InBand, b.Band, b.Now = fs.cfg.MaxFilesInBand, fs.cfg.MaxBand.Duration, in.Now
		p.Take, deferred = bookmark.Limit(cands, b)
		p.Deferred = int64(len(deferred))
		timestampWarnings(p, p.listedAt)
		return p, supersedeTaken(ctx, st, jobName, p)
	case fs.cfg.Listing == "ordered":
		return p, planOrdered(ctx, fs, p, bounds(in, fs))
	default:
		var cands []bookmark.File
		old := map[string]bookmark.File{}
		unchanged, err := bookmark.DiffExact(fs.list(ctx), st.Files(ctx, jobName, src.Ctx), func(c bookmark.Change) error {
			if c.Kind == bookmark.Modified {
				p.Modified++
				switch bookmark.OnModified(fs.cfg.OnModified) {
				case bookmark.Ignore:
					p.IgnoredModified++
					return nil
				case bookmark.Fail:
					return &ModifiedFileError{Ctx: src.Ctx, Path: c.File.Path, Old: c.Old, New: c.File}
				}
				old[c.File.Path] = c.Old
			}
			cands = append(cands, c.File)
			return nil
		})
		if err != nil {
			var me *ModifiedFileError
			if errors.As(err, &me) {
				return nil, err
			}
			return nil, fmt.Errorf("source %s: diffing listing against bookmark: %w", src.Ctx, err)
		}
		p.Unchanged = unchanged
		var deferred []bookmark.File
		p.Take, deferred = bookmark.Limit(cands, bounds(in, fs))
		p.Deferred = int64(len(deferred))
		for _, f := range p.Take {
			if o, ok := old[f.Path]; ok {
				p.Superseded = append(p.Superseded, o)
			}
		}
		return p, nil
	}
}

// planRange re-reads exactly the files that the runs read: each by its
// recorded path; a file since modified or deleted is an error, because its
// recorded content can no longer be read.
func planRange(ctx context.Context, st source.StateReader, jobName string, fs *Source, p *Plan, runs []string) error {
	want := map[string]bookmark.File{}
	for r, err := range st.RunInputs(ctx, jobName, runs) {
		if err != nil {
			return err
		}
		if r.Ctx == p.Ctx {
			want[r.File.Path] = r.File
		}
	}
	for f, err := range fs.list(ctx) {
		if err != nil {
			return err
		}
		w, ok := want[f.Path]
		if !ok {
			continue
		}
		if !w.SameIdentity(f) {
			p.Modified++
		}
		p.Take = append(p.Take, f)
		delete(want, f.Path)
	}
	for path := range want {
		return fmt.Errorf("source %s: %s was read by the runs in range but is gone", p.Ctx, path)
	}
	p.Take, _ = bookmark.Limit(p.Take, bookmark.Bounds{})
	return nil
}

// NextState is the source's bookmark after a run that read p.Take.
func (p *Plan) NextState(schema []bookmark.Column) bookmark.SourceState {
	s, _ := p.basis()
	s.Kind = bookmark.KindFiles
	s.Fingerprint, s.Describe = p.fp, p.fpDoc
	s.Tracking = bookmark.Tracking(p.src.cfg.Tracking)
	if schema != nil {
		s.Schema = schema
	}
	for _, f := range p.Take {
		s.Files++
		s.Bytes += f.Size
	}
	for _, f := range p.Superseded {
		s.Files--
		s.Bytes -= f.Size
	}
	for _, f := range p.Take {
		if p.src.cfg.Listing == "ordered" && f.Path > s.LastKey {
			s.LastKey = f.Path
		}
	}
	if s.Tracking == bookmark.TrackTimestamp {
		s = bookmark.AdvanceTimestamp(s, p.src.cfg.MaxBand.Duration, p.Take, p.listedAt)
	}
	return s
}

// supersedeTaken finds the recorded versions of the paths that timestamp
// tracking re-reads, so the records stay one current row per path.
func supersedeTaken(ctx context.Context, st source.StateReader, jobName string, p *Plan) error {
	if len(p.Take) == 0 {
		return nil
	}
	taken := make(map[string]bool, len(p.Take))
	for _, f := range p.Take {
		taken[f.Path] = true
	}
	for f, err := range st.Files(ctx, jobName, p.Ctx) {
		if err != nil {
			return err
		}
		if taken[f.Path] {
			p.Superseded = append(p.Superseded, f)
		}
	}
	return nil
}

// planOrdered lists only after the last key recorded: for prefixes whose
// keys sort in arrival order (dated keys), where every key at or before it
// was read. Keys are taken in key order, so bounds keep that true; a key
// that lands behind the mark, or an object rewritten in place, is not seen
// (the documented condition for using it).
func planOrdered(ctx context.Context, fs *Source, p *Plan, b bookmark.Bounds) error {
	var bytes int64
	for o, err := range objstore.ListAfter(fs.traced(ctx), fs.objs, "", p.prev.LastKey) {
		if err != nil {
			return fmt.Errorf("source %s: %w", p.Ctx, err)
		}
		if !fs.match.match(o.Key) {
			continue
		}
		f := bookmark.File{Path: o.Key, Size: o.Size, MTime: o.ModTime.UnixNano(), ETag: o.ETag}
		n := len(p.Take)
		if n > 0 && ((b.Files > 0 && n >= b.Files) || (b.Bytes > 0 && bytes+f.Size > b.Bytes)) {
			p.Deferred++
			continue
		}
		bytes += f.Size
		p.Take = append(p.Take, f)
	}
	return nil
}
