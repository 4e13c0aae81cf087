package files

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

var _ source.Plan = (*Plan)(nil)

// Bytes sums the sizes of Take.
func (p *Plan) Bytes() int64 {
	var n int64
	for _, f := range p.Take {
		n += f.Size
	}
	return n
}

// Pending is the number of files to read.
func (p *Plan) Pending() int64 { return int64(len(p.Take)) }

// Downloads is the bytes a remote source's run downloads.
func (p *Plan) Downloads() int64 {
	if _, local := p.src.objs.LocalPath(""); local {
		return 0
	}
	return p.Bytes()
}

// Size is the files and bytes to read.
func (p *Plan) Size() (files, bytes int64) { return int64(len(p.Take)), p.Bytes() }

// BadRecords is the source's on_bad_record.
func (p *Plan) BadRecords() string { return p.src.cfg.OnBadRecord }

// Report logs the plan and its warnings.
func (p *Plan) Report(log *slog.Logger) {
	log.Info("planned", "source", p.Ctx, "files", len(p.Take), "bytes", humanize.IBytes(uint64(p.Bytes())),
		"unchanged", p.Unchanged, "modified", p.Modified, "deferred", p.Deferred)
	if note := p.src.catalogNote(); note != "" {
		log.Info(note, "source", p.Ctx)
	}
	if p.src.inSinks > 0 {
		log.Warn("files in another tidemark sink's folder below the source are not read", "source", p.Ctx,
			"files", p.src.inSinks, "folders", joinComma(p.src.sinkDirs))
	}
	if p.IgnoredModified > 0 {
		log.Warn("modified files ignored (on_modified: ignore)", "source", p.Ctx, "files", p.IgnoredModified)
	}
	if p.RootMissing {
		log.Info("source folder does not exist yet (allow_missing: true): nothing to read", "source", p.Ctx, "path", p.src.location)
	}
	for _, w := range p.Warnings {
		log.Warn(w, "source", p.Ctx)
	}
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// Preview is the plan as `tidemark plan` shows it.
func (p *Plan) Preview() source.Preview {
	pv := source.Preview{Files: int64(len(p.Take)), Bytes: p.Bytes(), New: []string{},
		Modified: p.Modified, Unchanged: p.Unchanged, Deferred: p.Deferred, Warnings: p.Warnings}
	d := &PreviewDetail{Future: p.Future, RootMissing: p.RootMissing, InSinks: p.src.inSinks}
	for _, f := range p.Take {
		pv.New = append(pv.New, f.Path)
		if t := f.ModTime().UTC(); d.OldestUnread == nil || t.Before(*d.OldestUnread) {
			d.OldestUnread = &t
		}
	}
	pv.Detail = d
	return pv
}

// Count is the source's line of the run summary; res nil: nothing was
// executed (nothing new).
func (p *Plan) Count(res *engine.SourceResult) store.Count {
	inSinks := p.src.inSinks
	if p.tail {
		inSinks = 0 // the first batch counted them
	}
	if res == nil {
		return countOf(store.Count{}, CountDetail{Unchanged: p.Unchanged, InSinks: inSinks})
	}
	c := store.Count{Files: int64(len(p.Take)), Bytes: p.Bytes(), Rows: res.Rows, Rejected: res.Rejected}
	d := CountDetail{Modified: p.Modified, Deferred: p.Deferred, Missing: int64(len(p.missing)), Future: p.Future,
		InSinks: inSinks, ChangedDuringRead: p.changed}
	for _, f := range p.Take {
		if f.Size == 0 {
			d.Empty++
		}
	}
	return countOf(c, d)
}

// Advance is the source's next state and the files the run read.
func (p *Plan) Advance(runID string, res engine.SourceResult) (source.Advance, bool) {
	schema := res.Schema
	if c := p.Count(&res); CountDetailOf(c).Empty == c.Files {
		schema = nil // nothing was read to infer it from
	}
	a := source.Advance{State: p.NextState(schema)}
	// Under fail the schema never changes: no history to keep. A later
	// batch's history starts from the batch before it.
	if prev, _ := p.basis(); (p.src.cfg.SchemaEvolution != "" && p.src.cfg.SchemaEvolution != bookmark.EvolveFail) || len(prev.SchemaVersions) > 0 {
		a.State.SchemaVersions = bookmark.EvolveSchema(prev.SchemaVersions, prev.Schema, a.State.Schema, runID)
	}
	p.next = &a.State // the next batch, if any, starts from it
	for _, f := range p.Take {
		a.Added = append(a.Added, store.FileRecord{Ctx: p.Ctx, File: f})
	}
	for _, f := range p.Superseded {
		a.Superseded = append(a.Superseded, store.FileRecord{Ctx: p.Ctx, File: f})
	}
	return a, true
}

// Open stamps the local inputs, downloads the remote ones and starts
// checking the compressed ones alongside the engine.
func (p *Plan) Open(ctx context.Context, env source.Env) (source.Reading, error) {
	if m := p.src.cfg.SchemaEvolution; m != "" && m != bookmark.EvolveFail && !env.Caps.SchemaEvolution {
		return nil, fmt.Errorf("source %s: schema_evolution: %s is not supported by this engine (use fail, or the duckdb engine)", p.Ctx, m)
	}
	ins, err := p.stampInputs(env.Log)
	if err != nil {
		return nil, err
	}
	// A file deleted between planning and reading is dropped from the
	// plan (and left unrecorded) and the rest fetched again.
	var locals []string
	for attempt := 1; ; attempt++ {
		if locals, err = p.fetch(ctx, env); err == nil {
			break
		}
		if attempt == source.MaxAttempts || !p.dropMissing(ctx, env.Log) {
			return nil, err
		}
	}
	fc := p.src.cfg
	es := engine.Source{Ctx: p.Ctx, Format: fc.Format, Options: fc.Options, Hive: *fc.HivePartitioning,
		SchemaEvolution: fc.SchemaEvolution}
	if prev, has := p.basis(); has && len(prev.Schema) > 0 {
		es.Schema = prev.Schema
	} else if cs := p.src.catalogSchema(); cs != nil {
		es.Schema = cs
	}
	for j, f := range p.Take {
		es.Files = append(es.Files, engine.Input{Location: locals[j], Key: f.Path, Size: f.Size})
	}
	return &reading{p: p, ins: ins, in: es, verified: startVerify(ctx, es), log: env.Log}, nil
}

// reading is a file plan readied for one execution.
type reading struct {
	p        *Plan
	ins      []localInput
	in       engine.Source
	verified func() []error
	log      *slog.Logger
}

func (r *reading) Input() engine.Source { return r.in }

// Done checks what changed while the engine read: files that changed are
// dropped (and the execution repeated); a compressed file that does not
// end where it should is the cause of any failure; after a failure, files
// that vanished are dropped and the execution repeated.
func (r *reading) Done(ctx context.Context, engineErr error, _ engine.SourceResult, last bool) (bool, error) {
	bad := r.verified()
	if changed := changedInputs(r.ins); len(changed) > 0 {
		if last {
			return false, changedError(r.p.Ctx, changed)
		}
		r.p.dropChanged(changed, r.log)
		return true, nil
	}
	if len(bad) > 0 {
		return false, errors.Join(bad...) // the cause of any failure of the engine on the same input
	}
	if engineErr != nil && !last {
		return r.p.dropMissing(ctx, r.log), nil
	}
	return false, nil
}

// dropMissing removes planned files that no longer exist; it reports
// whether any was removed.
func (p *Plan) dropMissing(ctx context.Context, log *slog.Logger) bool {
	kept := p.Take[:0]
	gone := map[string]bool{}
	for _, f := range p.Take {
		if _, err := p.src.objs.Stat(ctx, f.Path); errors.Is(err, objstore.ErrNotExist) {
			log.Warn("input file disappeared after planning; not recorded, will be read if it comes back", "source", p.Ctx, "file", f.Path)
			p.missing = append(p.missing, f.Path)
			gone[f.Path] = true
			continue
		}
		kept = append(kept, f)
	}
	p.Take = kept
	// A modified file that vanished keeps its old record.
	p.Superseded = slices.DeleteFunc(p.Superseded, func(f bookmark.File) bool { return gone[f.Path] })
	return len(gone) > 0
}
