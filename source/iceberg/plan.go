package iceberg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// Plan is a run's part of an Iceberg source: the data files added by the
// snapshots after the bookmark's up to To (or, Whole, every data file of
// the table at To).
type Plan struct {
	job, ctx, table string
	prev            bookmark.SourceState
	uuid            string
	from            int64
	// to is the snapshot the run reads up to (nil: the table has none).
	to    *mark
	whole bool
	// partial, when not 0, is the snapshot (or, whole, the table's
	// snapshot) that a batch stops inside: the bookmark stays at done, the
	// last snapshot read whole, and names partial; the next plan drops
	// the files of partial already recorded.
	partial int64
	done    mark
	// next is the rest of a split plan, whose base state is what this
	// plan's Advance returned.
	next     *Plan
	steps    []step
	files    []dataFile
	deferred int64
	// superseded are the records of files read before that a reprocess
	// reads again.
	superseded []store.FileRecord
	schema     []bookmark.Column
	location   string
	warnings   []string
}

var _ source.Plan = (*Plan)(nil)

// Plan reads the table's snapshots after the bookmark (all of the table at
// its current snapshot on a first run or under disable; the files runs
// (from, to] read for a pause with a range). It changes nothing.
func (s *Source) Plan(ctx context.Context, req source.Request) (source.Plan, error) {
	tbl, err := s.load(ctx, req.State)
	if err != nil {
		return nil, err
	}
	name := s.cfg.Iceberg.Table
	p := &Plan{job: req.Job, ctx: s.ctx, table: name, prev: req.Prev, uuid: tbl.Metadata().TableUUID().String(),
		location: strings.TrimSuffix(tbl.Location(), "/")}
	if p.schema, err = columns(tbl.Schema(), name); err != nil {
		return nil, fmt.Errorf("source %s: %w", s.ctx, err)
	}
	d := DetailOf(req.Prev)
	has := req.HasPrev && req.Mode != bookmark.ModeDisable && d.SnapshotID != 0
	// began: a batch of the last run stopped inside snapshot d.Partial.
	began := req.HasPrev && req.Mode != bookmark.ModeDisable && req.RangeRuns == nil && d.Partial != 0
	if (has || began) && d.UUID != "" && d.UUID != p.uuid {
		return nil, &HistoryError{Job: req.Job, Ctx: s.ctx, Table: name, Snapshot: d.SnapshotID,
			Why: fmt.Sprintf("the table is another one now (its uuid was %s, is %s: dropped and made again)", d.UUID, p.uuid)}
	}
	switch {
	case req.RangeRuns != nil:
		err = p.planRange(ctx, req, tbl)
	case began && d.PartialWhole:
		err = p.planWholeAt(ctx, tbl, d.Partial)
	case !has:
		err = p.planWhole(ctx, tbl)
	default:
		err = p.planSince(ctx, s.cfg, req, tbl, d.SnapshotID)
	}
	if err == nil && began {
		err = p.dropRecorded(ctx, req, d.Partial)
	}
	if err != nil {
		return nil, err
	}
	if old := renames(tbl); old != nil {
		for _, f := range p.files {
			if err := checkNames(f, tbl.Schema(), old, s.ctx, name); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// mark is a snapshot a bookmark can name.
type mark struct{ ID, Seq int64 }

// planWhole reads every data file of the table at its current snapshot.
func (p *Plan) planWhole(ctx context.Context, tbl *table.Table) error {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		p.whole = true
		return nil
	}
	return p.planWholeAt(ctx, tbl, cur.SnapshotID)
}

// planWholeAt reads every data file of the table at snapshot id: a first
// run, or the rest of one a batch stopped inside.
func (p *Plan) planWholeAt(ctx context.Context, tbl *table.Table, id int64) error {
	p.whole = true
	s := tbl.SnapshotByID(id)
	if s == nil {
		return &HistoryError{Job: p.job, Ctx: p.ctx, Table: p.table, Snapshot: id, Why: "a run stopped after reading part of the " +
			"table at that snapshot, which is no longer in the table's history (expired by expire_snapshots)"}
	}
	p.to = &mark{s.SnapshotID, s.SequenceNumber}
	files, err := whole(ctx, tbl, *s, p.ctx, p.table)
	if err != nil {
		return err
	}
	p.files = files
	op := string(table.OpAppend)
	if s.Summary != nil {
		op = string(s.Summary.Operation)
	}
	p.steps = []step{{ID: s.SnapshotID, Seq: s.SequenceNumber, TimeMs: s.TimestampMs, Op: op, Files: files}}
	return nil
}

// dropRecorded drops the files of snapshot partial that an earlier batch
// read (they are recorded), and those only.
func (p *Plan) dropRecorded(ctx context.Context, req source.Request, partial int64) error {
	read := map[string]bool{}
	for f, err := range req.State.Files(ctx, req.Job, p.ctx) {
		if err != nil {
			return fmt.Errorf("source %s: reading the files recorded: %w", p.ctx, err)
		}
		read[f.Path] = true
	}
	keep := func(f dataFile) bool { return f.Snapshot != partial || !read[f.URI] }
	p.files = slices.DeleteFunc(p.files, func(f dataFile) bool { return !keep(f) })
	for i := range p.steps {
		p.steps[i].Files = slices.DeleteFunc(slices.Clone(p.steps[i].Files), func(f dataFile) bool { return !keep(f) })
	}
	return nil
}

// planSince reads the files the snapshots after from added, as
// on_rewrite and bounded_snapshots say.
func (p *Plan) planSince(ctx context.Context, cfg *Config, req source.Request, tbl *table.Table, from int64) error {
	p.from = from
	chain, err := since(tbl, req.Job, p.ctx, p.table, from)
	if err != nil {
		return err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("source %s: opening the files of Iceberg table %s: %w", p.ctx, p.table, err)
	}
	var read int64
	for i, s := range chain {
		st := step{ID: s.SnapshotID, Seq: s.SequenceNumber, TimeMs: s.TimestampMs}
		kind, what := operation(s)
		st.Op = kind
		if s.Summary != nil {
			st.Op = string(s.Summary.Operation)
		}
		switch kind {
		case "replace":
			st.Skip = "it rewrites rows and adds none (a compaction)"
		case "rewrite":
			switch cfg.OnRewrite {
			case RewriteIgnore:
				st.Skip = "on_rewrite: ignore (" + what + ")"
				p.warnings = append(p.warnings, fmt.Sprintf("Iceberg table %s: snapshot %d (%s: %s) skipped by on_rewrite: ignore; "+
					"the rows it removed stay in what earlier runs wrote, the rows it added are not read", p.table, s.SnapshotID, st.Op, what))
			case RewriteReprocess:
				return p.reprocess(ctx, req, tbl, s, what)
			default:
				return &RewriteError{Job: req.Job, Ctx: p.ctx, Table: p.table, Snapshot: s.SnapshotID, Op: st.Op, What: what}
			}
		default:
			if cfg.BoundedSnapshots > 0 && read == cfg.BoundedSnapshots {
				for _, rest := range chain[i:] {
					if k, _ := operation(rest); k == "append" {
						files, err := added(ctx, fs, rest, p.table)
						if err != nil {
							return err
						}
						p.deferred += int64(len(files))
					}
				}
				return nil
			}
			if st.Files, err = added(ctx, fs, s, p.table); err != nil {
				return err
			}
			p.files = append(p.files, st.Files...)
			read++
		}
		p.steps = append(p.steps, st)
		p.to = &mark{s.SnapshotID, s.SequenceNumber}
	}
	return nil
}

// reprocess reads the whole table at its current snapshot again, after an
// overwrite or delete snapshot s under on_rewrite: reprocess; the records
// of the files read before are superseded.
func (p *Plan) reprocess(ctx context.Context, req source.Request, tbl *table.Table, s table.Snapshot, what string) error {
	p.warnings = append(p.warnings, fmt.Sprintf("Iceberg table %s: snapshot %d (%s) rewrote rows; on_rewrite: reprocess "+
		"reads the whole table at its current snapshot again: the rows earlier runs read are read again", p.table, s.SnapshotID, what))
	p.steps, p.files = nil, nil
	if err := p.planWhole(ctx, tbl); err != nil {
		return err
	}
	reading := map[string]bool{}
	for _, f := range p.files {
		reading[f.URI] = true
	}
	for f, err := range req.State.Files(ctx, req.Job, p.ctx) {
		if err != nil {
			return fmt.Errorf("source %s: reading the files recorded: %w", p.ctx, err)
		}
		if reading[f.Path] {
			p.superseded = append(p.superseded, store.FileRecord{Ctx: p.ctx, File: f})
		}
	}
	return nil
}

// planRange reads again the data files that the runs (from, to] read.
func (p *Plan) planRange(ctx context.Context, req source.Request, tbl *table.Table) error {
	for r, err := range req.State.RunInputs(ctx, req.Job, req.RangeRuns) {
		if err != nil {
			return fmt.Errorf("source %s: reading the files of runs: %w", p.ctx, err)
		}
		if r.Ctx != p.ctx {
			continue
		}
		lp, err := localPath(r.File.Path)
		if err != nil {
			return fmt.Errorf("source %s: data file %s: %w", p.ctx, r.File.Path, err)
		}
		p.files = append(p.files, dataFile{URI: r.File.Path, Path: lp, Size: r.File.Size, TimeMs: r.File.MTime / 1e6})
	}
	if cur := tbl.CurrentSnapshot(); cur != nil {
		p.to = &mark{cur.SnapshotID, cur.SequenceNumber}
	}
	return nil
}

// Pending is the number of data files to read.
func (p *Plan) Pending() int64 { return int64(len(p.files)) }

// Downloads is 0: the files are read where they are.
func (p *Plan) Downloads() int64 { return 0 }

// Size is the data files and their bytes.
func (p *Plan) Size() (files, bytes int64) {
	for _, f := range p.files {
		bytes += f.Size
	}
	return int64(len(p.files)), bytes
}

// BadRecords is fail: Iceberg data files are typed.
func (p *Plan) BadRecords() string { return engine.BadFail }

// Report logs the plan and its warnings.
func (p *Plan) Report(log *slog.Logger) {
	files, bytes := p.Size()
	log.Info("planned", "source", p.ctx, "table", p.table, "after_snapshot", p.from, "up_to_snapshot", p.toID(),
		"files", files, "bytes", bytes, "deferred", p.deferred)
	for _, w := range p.warnings {
		log.Warn(w, "source", p.ctx)
	}
}

func (p *Plan) toID() int64 {
	if p.to == nil {
		return 0
	}
	return p.to.ID
}

// Preview is the plan as `tidemark plan` shows it: the snapshots, then the
// files.
func (p *Plan) Preview() source.Preview {
	files, bytes := p.Size()
	pv := source.Preview{Files: files, Bytes: bytes, New: []string{}, Deferred: p.deferred, Warnings: p.warnings}
	for _, f := range p.files {
		pv.New = append(pv.New, f.URI)
	}
	d := PreviewDetail{Table: p.table, From: p.from, To: p.toID(), Whole: p.whole, Snapshots: []SnapshotPlan{}}
	for _, s := range p.steps {
		sp := SnapshotPlan{ID: s.ID, Sequence: s.Seq, Operation: s.Op, Files: int64(len(s.Files)), Skip: s.Skip}
		for _, f := range s.Files {
			sp.Rows += f.Rows
		}
		d.Snapshots = append(d.Snapshots, sp)
	}
	pv.Detail = d
	return pv
}

// key is a data file's name for messages: its path under the table's
// location.
func (p *Plan) key(f dataFile) string {
	if k, ok := strings.CutPrefix(f.URI, p.location+"/"); ok {
		return k
	}
	return path.Base(f.URI)
}

// Open hands the engine the data files where they are, read with the
// table's schema.
func (p *Plan) Open(_ context.Context, env source.Env) (source.Reading, error) {
	in := engine.Source{Ctx: p.ctx, Format: "parquet", Schema: p.schema}
	if env.Caps.SchemaEvolution {
		// A data file written before a column was added lacks it: NULL,
		// as Iceberg reads it.
		in.SchemaEvolution = bookmark.EvolveNone
	}
	for _, f := range p.files {
		in.Files = append(in.Files, engine.Input{Location: f.Path, Key: p.key(f), Size: f.Size})
	}
	return &reading{p: p, in: in}, nil
}

// reading is the plan's files, read once.
type reading struct {
	p  *Plan
	in engine.Source
}

func (r *reading) Input() engine.Source { return r.in }

// Done names a data file that is missing when the engine failed: Iceberg
// data files never change, so a missing one is never retried.
func (r *reading) Done(_ context.Context, engineErr error, _ engine.SourceResult, _ bool) (bool, error) {
	if engineErr == nil {
		return false, nil
	}
	for _, f := range r.p.files {
		if _, err := os.Stat(f.Path); errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("source %s: data file %s of Iceberg table %s (snapshot %d) is missing: the table "+
				"names a file that is not there (deleted by hand, or by an orphan-file cleanup)", r.p.ctx, f.URI, r.p.table, f.Snapshot)
		}
	}
	return false, nil
}

// Count is the source's line of the run summary.
func (p *Plan) Count(res *engine.SourceResult) store.Count {
	d := CountDetail{Table: p.table, From: p.from, To: p.toID(), Whole: p.whole}
	for _, s := range p.steps {
		switch {
		case s.Skip != "":
			d.Skipped++
		case s.ID != p.partial:
			d.Snapshots++
		}
	}
	c := store.Count{Detail: d}
	if res != nil {
		c.Files, c.Bytes = p.Size()
		c.Rows = res.Rows
	}
	return c
}

// Advance moves the bookmark to the last snapshot read and records the
// data files read.
func (p *Plan) Advance(_ string, _ engine.SourceResult) (source.Advance, bool) {
	if p.to == nil {
		return source.Advance{}, false
	}
	s := p.prev
	s.Kind, s.Fingerprint, s.Describe = Kind, "iceberg:"+p.table, "Iceberg table "+p.table
	s.Schema = p.schema
	d := DetailOf(p.prev)
	var a source.Advance
	for _, f := range p.files {
		a.Added = append(a.Added, store.FileRecord{Ctx: p.ctx, File: bookmark.File{Path: f.URI, Size: f.Size, MTime: f.TimeMs * 1e6}})
		s.Files++
		s.Bytes += f.Size
	}
	for _, f := range p.superseded {
		s.Files--
		s.Bytes -= f.File.Size
	}
	a.Superseded = p.superseded
	n := d.Snapshots
	for _, st := range p.steps {
		if st.Skip == "" && st.ID != p.partial {
			n++
		}
	}
	to := *p.to
	nd := StateDetail{Table: p.table, UUID: p.uuid, SnapshotID: to.ID, Sequence: to.Seq, Snapshots: n}
	if p.partial != 0 {
		nd.SnapshotID, nd.Sequence, nd.Partial, nd.PartialWhole = p.done.ID, p.done.Seq, p.partial, p.whole
	}
	s.Detail = nd
	a.State = s
	if p.next != nil {
		p.next.prev = s
	}
	return a, true
}

var _ source.Splitter = (*Plan)(nil)

// Split cuts the plan after its first n files, in the order it reads them
// (snapshot by snapshot, oldest first). A cut inside a snapshot leaves the
// bookmark at the last snapshot read whole, naming the one begun
// (StateDetail.Partial): its files recorded are not read again.
func (p *Plan) Split(n int) (head, rest source.Plan) {
	h, r := *p, *p
	r.files, r.steps, r.deferred, r.warnings, r.superseded, r.partial, r.next = nil, nil, 0, nil, nil, 0, p.next
	if n >= len(p.files) {
		h.next = &r
		r.from = h.toID()
		return &h, &r
	}
	last := p.files[n-1]
	complete := p.files[n].Snapshot != last.Snapshot
	k := slices.IndexFunc(p.steps, func(s step) bool { return s.ID == last.Snapshot && s.Skip == "" })
	h.files, r.files = p.files[:n:n], p.files[n:]
	in := func(fs []dataFile) func(dataFile) bool {
		set := map[string]bool{}
		for _, f := range fs {
			set[f.URI] = true
		}
		return func(f dataFile) bool { return set[f.URI] }
	}
	trim := func(st step, keep func(dataFile) bool) step {
		st.Files = slices.DeleteFunc(slices.Clone(st.Files), func(f dataFile) bool { return !keep(f) })
		return st
	}
	h.steps = append(slices.Clone(p.steps[:k]), trim(p.steps[k], in(h.files)))
	h.to = &mark{p.steps[k].ID, p.steps[k].Seq}
	r.steps = slices.Clone(p.steps[k+1:])
	if !complete {
		h.partial = p.steps[k].ID
		switch {
		case p.whole:
			d := DetailOf(p.prev)
			h.done = mark{d.SnapshotID, d.Sequence}
		case k > 0:
			h.done = mark{p.steps[k-1].ID, p.steps[k-1].Seq}
		default:
			h.done = mark{p.from, DetailOf(p.prev).Sequence}
			if p.partial != 0 || p.done != (mark{}) {
				h.done = p.done
			}
		}
		r.steps = append([]step{trim(p.steps[k], in(r.files))}, r.steps...)
		r.from = h.done.ID
	} else {
		r.from = h.to.ID
	}
	for _, f := range p.superseded {
		if in(r.files)(dataFile{URI: f.File.Path}) {
			r.superseded = append(r.superseded, f)
		} else {
			h.superseded = append(h.superseded, f)
		}
	}
	h.next = &r
	return &h, &r
}
