package sqltable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// JobSink is a job's SQL table sink (sink.Sink): the engine writes Parquet
// into a temporary folder, Stage loads it into a staging table, Publish
// moves the rows into the target table in one transaction with the run's
// marker row.
type JobSink struct {
	cfg  SinkConfig
	spec job.Sink
	k    *Sink // connected on first use
}

var _ sink.Sink = (*JobSink)(nil)

func init() {
	sink.Register(sink.KindTable, func(_ context.Context, _ *job.Spec, k job.Sink) (sink.Sink, error) {
		return &JobSink{cfg: jobSinkConfig(k), spec: k}, nil
	}, func(ctx context.Context, o store.Output) (sink.Location, error) {
		return openLocation(ctx, o.Table)
	})
}

func jobSinkConfig(k job.Sink) SinkConfig { return k.Config.(*JobConfig).Runtime(k.Ctx) }

// target is the sink's target as kept in output manifests, without a
// password (only the name of the variable that holds it), so a
// roll-forward or purge needs no job file.
func (c SinkConfig) target() *manifest.Table {
	return &manifest.Table{Ctx: c.Ctx, Connection: c.Connection, PasswordEnv: c.PasswordEnv,
		Table: c.Table, Mode: c.Mode, MergeKeys: c.MergeKeys}
}

func (j *JobSink) conn(ctx context.Context) (*Sink, error) {
	if j.k == nil {
		k, err := Open(ctx, j.cfg)
		if err != nil {
			return nil, err
		}
		j.k = k
	}
	return j.k, nil
}

// Ctx is the sink's ctx.
func (j *JobSink) Ctx() string { return j.cfg.Ctx }

// Close closes the connection, if one was opened.
func (j *JobSink) Close() error {
	if j.k == nil {
		return nil
	}
	err := j.k.Close()
	j.k = nil
	return err
}

// Claim refuses a run whose state has no record of the newest run of the
// job that loaded into the table (its marker row names the job and run):
// the state was lost or is older than the table. A disable run, or one
// that adopts the sink, is not checked.
func (j *JobSink) Claim(ctx context.Context, c sink.Claim) error {
	if c.Adopt || c.Mode == bookmark.ModeDisable {
		return nil
	}
	k, err := j.conn(ctx)
	if err != nil {
		return err
	}
	last, err := k.LastRun(ctx, c.Job)
	if err != nil || last == "" {
		return err
	}
	known, err := c.Known(ctx, last)
	if err != nil {
		return fmt.Errorf("reading run %s: %w", last, err)
	}
	if !known {
		return &sink.OwnedError{Sink: j.cfg.Ctx, Location: j.cfg.Table, Job: c.Job, State: c.Identity, LastRun: last}
	}
	return nil
}

// Cleanup drops the staging tables of the job's dead runs.
func (j *JobSink) Cleanup(ctx context.Context, dead func(runID string) (bool, error), _ *slog.Logger) error {
	k, err := j.conn(ctx)
	if err != nil {
		return err
	}
	err = k.Cleanup(ctx, func(runID string) bool {
		d, err := dead(runID)
		return err != nil || !d // unknown: keep; another job's run: not ours to drop
	})
	if err != nil {
		return fmt.Errorf("sink %s: cleaning staging tables: %w", j.cfg.Ctx, err)
	}
	return nil
}

// Prepare makes the temporary folder the engine writes Parquet into.
func (j *JobSink) Prepare(ctx context.Context, run sink.Run) (sink.Staging, error) {
	k, err := j.conn(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := run.TempDir("stage-")
	if err != nil {
		return nil, fmt.Errorf("sink %s: making staging folder: %w", j.cfg.Ctx, err)
	}
	return &tableStaging{j: j, k: k, run: run, dir: dir}, nil
}

// tableStaging is a table sink's staging area for one execution.
type tableStaging struct {
	j   *JobSink
	k   *Sink
	run sink.Run
	dir string
}

func (s *tableStaging) Target() engine.Sink {
	return engine.Sink{Ctx: s.j.spec.Ctx, From: s.j.spec.From, Format: "parquet", Location: filepath.Join(s.dir, "data"),
		Ordered: s.j.cfg.mode() == "merge"}
}

func (s *tableStaging) Rejects() string                       { return "" }
func (s *tableStaging) EngineStarted(context.Context)         {}
func (s *tableStaging) EngineReturned(context.Context, error) {}
func (s *tableStaging) Discard(context.Context)               {} // the next run's Cleanup drops its staging table

// Stage loads the engine's Parquet files into the run's staging table.
func (s *tableStaging) Stage(ctx context.Context, res engine.SinkResult, _ bool) (sink.Staged, error) {
	var files []string
	for _, f := range res.Files {
		files = append(files, filepath.Join(s.dir, "data", filepath.FromSlash(f.Path)))
	}
	rows, err := s.k.Stage(ctx, s.run.ID, files, nil)
	if err != nil {
		return sink.Staged{}, err
	}
	out := store.Output{RunID: s.run.ID, Sink: s.j.cfg.Ctx, Kind: manifest.TableLoad, Table: s.j.cfg.target(),
		Final: s.j.cfg.Table, Rows: rows}
	return sink.Staged{Outputs: []store.Output{out}, Count: store.Count{Rows: rows}}, nil
}

// tableLocation is a table sink opened from its manifest location.
type tableLocation struct{ k *Sink }

func openLocation(ctx context.Context, t *manifest.Table) (*tableLocation, error) {
	if t == nil {
		return nil, errors.New("reading table sink location: the output has no table target")
	}
	k, err := Open(ctx, SinkConfig{Ctx: t.Ctx, Connection: t.Connection, PasswordEnv: t.PasswordEnv,
		Table: t.Table, Mode: t.Mode, MergeKeys: t.MergeKeys})
	if err != nil {
		return nil, err
	}
	return &tableLocation{k: k}, nil
}

func (l *tableLocation) Close() error { return l.k.Close() }

// Publish moves the run's staged rows into the table: one database
// transaction with the run's marker, so repeating it is a no-op.
func (l *tableLocation) Publish(ctx context.Context, p sink.Publication) error {
	var known func(ctx context.Context, runID string) (bool, error)
	if p.Run.Mode != bookmark.ModeDisable { // a disable run is not checked (see Claim)
		known = func(ctx context.Context, runID string) (bool, error) {
			_, err := p.State.Run(ctx, p.Job, runID)
			if errors.Is(err, store.ErrNotFound) {
				return false, nil
			}
			return err == nil, err
		}
	}
	err := l.k.PublishKnown(ctx, p.Job, p.RunID, known)
	var newer *NewerRunError
	if errors.As(err, &newer) {
		id, ierr := p.State.Identity(ctx)
		if ierr != nil {
			return ierr
		}
		return &sink.OwnedError{Sink: l.k.cfg.Ctx, Location: l.k.cfg.Table, Job: p.Job, State: id, LastRun: newer.Run,
			Publish: p.RunID}
	}
	if err != nil {
		return fmt.Errorf("publishing run %s into table %s: %w", p.RunID, l.k.cfg.Table, err)
	}
	fault.At(fault.MidPublish)
	return nil
}

func (l *tableLocation) Published(context.Context, string, *slog.Logger) {}

// Purge deletes the rows the run loaded.
func (l *tableLocation) Purge(ctx context.Context, job, runID string, _ []store.Output, log *slog.Logger) (sink.Purged, error) {
	n, err := l.k.Purge(ctx, job, runID)
	if errors.Is(err, ErrNoRunColumn) {
		return sink.Purged{}, fmt.Errorf("purging run %s from table %s: %w", runID, l.k.cfg.Table, err)
	}
	if err != nil {
		return sink.Purged{}, err
	}
	log.Info("deleted", "run", runID, "table", l.k.cfg.Table, "rows", n)
	return sink.Purged{Deleted: []string{fmt.Sprintf("%d rows of table %s", n, l.k.cfg.Table)}}, nil
}

var _ sink.PurgeChecker = (*tableLocation)(nil)

// CheckPurge refuses a reset's purge when the table holds rows of a run
// of the job that the state has no record of (the newest marker, as
// Claim reads it): a copy of the state runs the job now.
func (l *tableLocation) CheckPurge(ctx context.Context, c sink.Claim) error {
	last, err := l.k.LastRun(ctx, c.Job)
	if err != nil || last == "" {
		return err
	}
	known, err := c.Known(ctx, last)
	if err != nil || known {
		return err
	}
	return &sink.OwnedError{Location: l.k.cfg.Table, Job: c.Job, State: c.Identity, LastRun: last, Purge: true}
}

var _ sink.Appender = (*JobSink)(nil)

// Appends reports whether the table sink is in append mode: a run may
// then publish in batches (sink.Appender). merge and overwrite make a run
// one batch.
func (j *JobSink) Appends() bool { return j.cfg.Mode == "append" }
