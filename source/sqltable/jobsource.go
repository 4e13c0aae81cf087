package sqltable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// JobSource is a SQL table source of a job (source.Source). It connects
// when it plans.
type JobSource struct {
	ctx string
	cfg Config
	src *Source
}

var _ source.Source = (*JobSource)(nil)

// OpenJob opens a job's SQL table source; a relative SQLite path resolves
// against the job file. It connects on Plan.
func OpenJob(spec *job.Spec, src job.Source) *JobSource {
	return &JobSource{ctx: src.Ctx, cfg: jobConfig(spec, src)}
}

// jobConfig is a source's configuration, with a relative SQLite path
// resolved against the job file.
func jobConfig(spec *job.Spec, src job.Source) Config {
	return src.Config.(*JobConfig).Runtime(src.Ctx, spec.Dir)
}

// Ctx is the source's ctx.
func (j *JobSource) Ctx() string { return j.ctx }

// CheckDefinition passes: a table source's definition includes keys read
// from the database, so Plan checks it.
func (j *JobSource) CheckDefinition(context.Context, bookmark.SourceState) error { return nil }

// Close closes the connection, if Plan opened one.
func (j *JobSource) Close() error {
	if j.src == nil {
		return nil
	}
	err := j.src.Close()
	j.src = nil
	return err
}

// Plan connects, checks the definition and fixes what the mode reads: the
// window up to a fixed upper bound, or the recorded ranges of a pause
// from/to run.
func (j *JobSource) Plan(ctx context.Context, in source.Request) (source.Plan, error) {
	if j.src == nil {
		ts, err := Open(ctx, j.cfg)
		if err != nil {
			return nil, err
		}
		j.src = ts
	}
	ts := j.src
	p := &jobPlan{ctx: j.ctx, src: ts, prev: in.Prev}
	p.fpDoc = ts.Describe()
	h := sha256.Sum256([]byte(p.fpDoc))
	p.fp = hex.EncodeToString(h[:12])
	if in.HasPrev && p.prev.Fingerprint != p.fp && in.Mode != bookmark.ModeDisable && !in.AllowChange {
		return nil, &source.ChangedError{Ctx: j.ctx, Was: p.prev.Describe, Now: p.fpDoc}
	}
	if in.RangeRuns != nil {
		p.ranges = [][]byte{}
		for r, err := range in.State.RunRanges(ctx, in.Job, in.RangeRuns) {
			if err != nil {
				return nil, err
			}
			if r.Ctx == j.ctx {
				p.ranges = append(p.ranges, r.Range)
			}
		}
		return p, nil
	}
	cursor := []byte(StateDetailOf(p.prev).Cursor)
	if in.Mode == bookmark.ModeDisable {
		cursor = nil // read everything
	}
	planFn := ts.PlanRun // a run does not count first
	if in.Count {
		planFn = ts.Plan
	}
	var err error
	if p.plan, err = planFn(ctx, cursor); err != nil {
		return nil, err
	}
	return p, nil
}

// jobPlan is a SQL table source's part of a run.
type jobPlan struct {
	ctx       string
	src       *Source
	prev      bookmark.SourceState
	fp, fpDoc string
	plan      *Plan    // enable, pause, disable
	ranges    [][]byte // pause from/to: the ranges to re-read
	ex        *Extract
}

var _ source.Plan = (*jobPlan)(nil)

// Pending is 1 when the run has rows (or ranges) to read. Rows that
// appeared behind the mark are reported once: the run goes on to record
// the check's new baseline even when it reads nothing.
func (p *jobPlan) Pending() int64 {
	if p.ranges != nil {
		return int64(len(p.ranges))
	}
	if p.plan.Pending() || p.plan.Regressions > 0 {
		return 1
	}
	return 0
}

func (p *jobPlan) Downloads() int64           { return 0 }
func (p *jobPlan) Size() (files, bytes int64) { return 0, 0 }
func (p *jobPlan) BadRecords() string         { return engine.BadFail }

// Report logs the plan and what a data engineer must look at.
func (p *jobPlan) Report(log *slog.Logger) {
	for _, n := range p.src.Notes() {
		log.Warn(n, "source", p.ctx)
	}
	if p.plan == nil {
		log.Info("planned", "source", p.ctx, "ranges", len(p.ranges))
		return
	}
	attrs := []any{"source", p.ctx, "pending", p.plan.Pending()} // a run does not count new rows first
	if p.plan.NewRows >= 0 {
		attrs = append(attrs, "new_rows", p.plan.NewRows)
	}
	attrs = append(attrs, "late_rows", p.plan.Late, "after", strings.Join(p.plan.From, ","),
		"up_to", strings.Join(p.plan.To, ","), "bounded", p.plan.Bounded)
	log.Info("planned", attrs...)
	if p.plan.Regressions > 0 {
		log.Warn("rows appeared behind the bookmark and will not be read: the bookmark keys are not monotonic, or a transaction committed later than the lookback; widen lookback or choose keys that only grow",
			"source", p.ctx, "rows", p.plan.Regressions)
	}
	if p.plan.NullKeys > 0 {
		log.Warn("rows with a NULL bookmark key left out (on_null_key: skip)", "source", p.ctx, "rows", p.plan.NullKeys)
	}
}

// Preview is the plan as `tidemark plan` shows it.
func (p *jobPlan) Preview() source.Preview {
	d := PreviewDetail{RegressionCheckOff: p.src.cfg.NoRegressionCheck}
	if p.plan != nil {
		d.Rows, d.After, d.UpTo, d.Regressions = p.plan.NewRows+p.plan.Late, p.plan.From, p.plan.To, p.plan.Regressions
	}
	return source.Preview{New: []string{}, Detail: d}
}

// Count is the source's run summary.
func (p *jobPlan) Count(*engine.SourceResult) store.Count {
	var c store.Count
	var d CountDetail
	if p.plan != nil {
		d.Regressions, d.NullKeys = p.plan.Regressions, p.plan.NullKeys
		d.KeysAfter, d.KeysUpTo = keysText(p.plan.From), keysText(p.plan.To)
	}
	if ex := p.ex; ex != nil {
		c.Rows, d.Late, c.Files, c.Bytes = ex.Rows, ex.Late, int64(ex.Parts), ex.Bytes
	}
	c.Detail = d
	return c
}

// Advance is the source's bookmark after the run, and the run's
// input-manifest record: the key range it read.
func (p *jobPlan) Advance(runID string, _ engine.SourceResult) (source.Advance, bool) {
	if p.ex == nil || p.ex.Cursor == nil {
		return source.Advance{}, false
	}
	s := p.prev
	s.Kind = bookmark.KindTable
	s.Fingerprint, s.Describe = p.fp, p.fpDoc
	s.Schema = p.ex.Schema
	d := StateDetailOf(p.prev)
	d.Cursor = p.ex.Cursor
	d.Runs++ // runs that read rows
	d.Rows += p.ex.Rows
	s.Detail = d
	rec := store.RangeRecord{Ctx: p.ctx, RunID: runID, Range: p.ex.Range, Rows: p.ex.Rows}
	return source.Advance{State: s, Ranges: []store.RangeRecord{rec}}, true
}

// Open hands the rows to the engine through a named pipe while they are
// read, when the engine reads pipes, the platform has them and bad
// records fail the run (skip and quarantine read sources again); else it
// extracts them to files first, once per run.
func (p *jobPlan) Open(ctx context.Context, env source.Env) (source.Reading, error) {
	dir, err := env.TempDir()
	if err != nil {
		return nil, err
	}
	dir = filepath.Join(dir, p.ctx)
	if env.Caps.Pipes && pipesWork && env.Policy == engine.BadFail && p.ranges == nil {
		st, err := startStream(ctx, p, dir)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	ex, err := p.extract(ctx, dir)
	if err != nil {
		return nil, err
	}
	return extracted{in: extractInput(p.ctx, ex), src: p.src}, nil
}

// extract reads the plan's rows into dir, once per run.
func (p *jobPlan) extract(ctx context.Context, dir string) (*Extract, error) {
	if p.ex != nil {
		return p.ex, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	if p.ranges != nil {
		p.ex, err = p.src.ReadRanges(ctx, p.ranges, dir)
	} else {
		p.ex, err = p.plan.Extract(ctx, dir)
	}
	return p.ex, err
}

// extracted is an extract readied for the engine: files tidemark wrote.
type extracted struct {
	in  engine.Source
	src *Source
}

func (e extracted) Input() engine.Source { return e.in }
func (e extracted) Done(_ context.Context, engineErr error, _ engine.SourceResult, _ bool) (bool, error) {
	return false, e.src.engineFailed(engineErr)
}

// extractInput is the engine's view of an extract.
func extractInput(ctx string, ex *Extract) engine.Source {
	es := engine.Source{Ctx: ctx, Format: ex.Format, Options: ex.Options, Schema: ex.Schema, Exact: true}
	for _, f := range ex.Files {
		var size int64
		if info, err := os.Stat(f); err == nil {
			size = info.Size()
		}
		es.Files = append(es.Files, engine.Input{Location: f, Key: filepath.Base(f), Size: size})
	}
	return es
}

func init() {
	source.Register(source.Kind{Name: source.KindTable, Marker: "connection", Noun: "SQL tables (connection:)",
		Records: bookmark.KindTable, Count: bookmark.DecodeAs[CountDetail](), State: bookmark.DecodeAs[StateDetail](),
		Config: func() job.Config { return new(JobConfig) }, Reset: resetChanges,
		Open: func(_ context.Context, spec *job.Spec, src job.Source) (source.Source, error) {
			switch src.Config.(*JobConfig).Changes {
			case ChangesLog:
				return OpenLog(spec, src), nil
			case ChangesDetect:
				return OpenDetect(spec, src), nil
			}
			return OpenJob(spec, src), nil
		}})
}
