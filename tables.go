package tidemark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	sinksql "github.com/tidemark-etl/tidemark/sink/sqltable"
	"github.com/tidemark-etl/tidemark/source/sqltable"
	"github.com/tidemark-etl/tidemark/store"
)

// rangePrefix names the input-manifest records of SQL table sources: one
// record per run, whose ETag holds the key range the run read (JSON).
const rangePrefix = "range/"

// tablePlan is a SQL table source's part of a run.
type tablePlan struct {
	src    *sqltable.Source
	plan   *sqltable.Plan // enable, pause, disable
	ranges [][]byte       // pause from/to: the ranges to re-read
	ex     *sqltable.Extract
}

// pending is how much a planned source has to read.
func (p *SourcePlan) pending() int64 {
	if p.table == nil {
		return int64(len(p.Take))
	}
	if p.table.ranges != nil {
		return int64(len(p.table.ranges))
	}
	// Rows that appeared behind the mark are reported once: the run goes
	// on to record the check's new baseline even when it reads nothing.
	if p.table.plan.Pending() || p.table.plan.Regressions > 0 {
		return 1
	}
	return 0
}

// tableConfig is a source's sqltable configuration, with a relative SQLite
// path resolved against the job file.
func tableConfig(spec *job.Spec, src job.Source) sqltable.Config {
	return tableSourceConfig(src).Runtime(src.Ctx, spec.Dir)
}

// planTable plans a SQL table source: its fixed upper bound and what the
// mode reads. The opened source is closed by the runner.
func planTable(ctx context.Context, st store.Store, jobName string, spec *job.Spec, src job.Source, in planInput) (*SourcePlan, error) {
	ts, err := sqltable.Open(ctx, tableConfig(spec, src))
	if err != nil {
		return nil, err
	}
	p := &SourcePlan{Ctx: src.Ctx, table: &tablePlan{src: ts}}
	p.prev, p.hasPrev = in.states[src.Ctx]
	p.fpDoc = ts.Describe()
	h := sha256.Sum256([]byte(p.fpDoc))
	p.fp = hex.EncodeToString(h[:12])
	if p.hasPrev && p.prev.Fingerprint != p.fp && in.mode != bookmark.ModeDisable && !in.allowDrift {
		ts.Close()
		return nil, &SourceChangedError{Ctx: src.Ctx, Was: p.prev.Describe, Now: p.fpDoc}
	}
	switch {
	case in.rangeRuns != nil:
		p.table.ranges = [][]byte{}
		for r, err := range st.RunInputs(ctx, jobName, in.rangeRuns) {
			if err != nil {
				ts.Close()
				return nil, err
			}
			if r.Ctx == src.Ctx && strings.HasPrefix(r.File.Path, rangePrefix) {
				p.table.ranges = append(p.table.ranges, []byte(r.File.ETag))
			}
		}
		return p, nil
	default:
		cursor := p.prev.Cursor
		if in.mode == bookmark.ModeDisable {
			cursor = nil // read everything
		}
		planFn := ts.PlanRun // a run does not count first
		if in.count {
			planFn = ts.Plan
		}
		p.table.plan, err = planFn(ctx, cursor)
	}
	if err != nil {
		ts.Close()
		return nil, err
	}
	return p, nil
}

// extractTable reads a table plan's rows into dir, once per run.
func (p *SourcePlan) extractTable(ctx context.Context, dir string) (*sqltable.Extract, error) {
	t := p.table
	if t.ex != nil {
		return t.ex, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var err error
	if t.ranges != nil {
		t.ex, err = t.src.ReadRanges(ctx, t.ranges, dir)
	} else {
		t.ex, err = t.plan.Extract(ctx, dir)
	}
	return t.ex, err
}

// tableInput is the engine's view of an extract.
func tableInput(ctx string, ex *sqltable.Extract) engine.Source {
	es := engine.Source{Ctx: ctx, Format: ex.Format, Options: ex.Options, Schema: ex.Schema, Exact: true}
	for _, f := range ex.Files {
		var size int64
		if info, err := os.Stat(f); err == nil {
			size = info.Size()
		}
		es.Files = append(es.Files, engine.Input{Path: f, Key: filepath.Base(f), Size: size})
	}
	return es
}

// tableCount is a table source's run summary.
func (p *SourcePlan) tableCount() store.Count {
	c := store.Count{Table: true}
	if t := p.table; t.plan != nil {
		c.Regressions, c.NullKeys = t.plan.Regressions, t.plan.NullKeys
		c.KeysAfter, c.KeysUpTo = strings.Join(t.plan.From, ", "), strings.Join(t.plan.To, ", ")
	}
	if ex := p.table.ex; ex != nil {
		c.Rows, c.Late, c.Files, c.Bytes = ex.Rows, ex.Late, int64(ex.Parts), ex.Bytes
	}
	return c
}

// tableState is a table source's bookmark after the run, and the run's
// input-manifest record.
func (p *SourcePlan) tableState(runID string) (bookmark.SourceState, store.FileRecord) {
	s := p.prev
	s.Kind = "table"
	s.Fingerprint, s.Describe = p.fp, p.fpDoc
	s.Schema = p.table.ex.Schema
	s.Cursor = p.table.ex.Cursor
	s.Files++ // runs that read rows
	s.Bytes += p.table.ex.Rows
	rec := store.FileRecord{Ctx: p.Ctx, File: bookmark.File{Path: rangePrefix + runID, Size: p.table.ex.Rows,
		MTime: time.Now().UnixNano(), ETag: string(p.table.ex.Range)}}
	return s, rec
}

// tableRootPrefix marks an output location that is a SQL table.
const tableRootPrefix = "table:"

// tableLocation is a table sink's location as kept in output manifests:
// its configuration as JSON, without a password (only the name of the
// variable that holds it), so a roll-forward or purge needs no job file.
func tableLocation(k job.Sink) string {
	b, _ := json.Marshal(tableSinkConfig(k))
	return tableRootPrefix + string(b)
}

// openTableSink opens a table sink from its manifest location.
func openTableSink(ctx context.Context, loc string) (*sinksql.Sink, error) {
	var cfg sinksql.SinkConfig
	if err := json.Unmarshal([]byte(strings.TrimPrefix(loc, tableRootPrefix)), &cfg); err != nil {
		return nil, fmt.Errorf("reading table sink location: %w", err)
	}
	return sinksql.Open(ctx, cfg)
}

// publishTable publishes a committed run into a table sink: one database
// transaction with the run's marker, so repeating it is a no-op.
func publishTable(ctx context.Context, o store.Output, jobName string) error {
	k, err := openTableSink(ctx, o.Root)
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.Publish(ctx, jobName, o.RunID); err != nil {
		return fmt.Errorf("publishing run %s into table %s: %w", o.RunID, o.Final, err)
	}
	return nil
}

// purgeTable removes what a run loaded into a table sink.
func purgeTable(ctx context.Context, o store.Output, jobName string) (int64, error) {
	k, err := openTableSink(ctx, o.Root)
	if err != nil {
		return 0, err
	}
	defer k.Close()
	n, err := k.Purge(ctx, jobName, o.RunID)
	if errors.Is(err, sinksql.ErrNoRunColumn) {
		return 0, fmt.Errorf("purging run %s from table %s: %w", o.RunID, o.Final, err)
	}
	return n, err
}

// cleanTableSinks drops staging tables of this job's runs that never
// committed (after the roll-forward, every committed run is published).
func cleanTableSinks(ctx context.Context, st store.Store, jobName string, spec *job.Spec) error {
	if spec == nil {
		return nil
	}
	for _, k := range spec.Sinks {
		if !k.IsTable() {
			continue
		}
		ts, err := sinksql.Open(ctx, tableSinkConfig(k))
		if err != nil {
			return err
		}
		err = ts.Cleanup(ctx, func(runID string) bool {
			r, err := st.Run(ctx, jobName, runID)
			if errors.Is(err, store.ErrNotFound) {
				return true // another job's run: not ours to drop
			}
			_ = r
			return err != nil // unknown: keep; this job's dead or failed runs: drop
		})
		ts.Close()
		if err != nil {
			return fmt.Errorf("sink %s: cleaning staging tables: %w", k.Ctx, err)
		}
	}
	return nil
}
