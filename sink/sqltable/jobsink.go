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
	sink.Register(sink.Kind{Name: sink.KindTable, Marker: "connection", Noun: "SQL tables (connection:)",
		Config: func() job.Config { return new(JobConfig) },
		Open: func(_ context.Context, _ *job.Spec, k job.Sink) (sink.Sink, error) {
			return &JobSink{cfg: jobSinkConfig(k), spec: k}, nil
		},
		Locate: func(ctx context.Context, o store.Output) (sink.Location, error) {
			return openLocation(ctx, o.Table)
		},
		Outputs: []manifest.Kind{manifest.TableLoad}})
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
// the state was lost or is older than the table. It then makes the
// table's ownership row name this state store: a table without one is
// claimed; one of another store whose history this one holds (`tidemark
// state copy` made it: it knows the run that claimed the table, at a
// version no newer than its own) is taken over, conditionally under the
// table's lock, and that store is refused from then on at its claims,
// loads and purges; any other is refused. With Adopt the row is rewritten
// for this store whatever it says (no check). A disable run is not
// checked and claims nothing.
func (j *JobSink) Claim(ctx context.Context, c sink.Claim) error {
	if c.Mode == bookmark.ModeDisable {
		return nil
	}
	k, err := j.conn(ctx)
	if err != nil {
		return err
	}
	mine := Owner{StateStoreID: c.Identity.ID, StateStore: store.Redact(c.Identity.Location), Version: c.Version,
		ClaimedBy: c.RunID}
	if !c.Adopt {
		last, err := k.LastRun(ctx, c.Job)
		if err != nil {
			return err
		}
		if last != "" {
			known, err := c.Known(ctx, last)
			if err != nil {
				return fmt.Errorf("reading run %s: %w", last, err)
			}
			if !known {
				return &sink.OwnedError{Sink: j.cfg.Ctx, Location: j.cfg.Table, Job: c.Job, State: c.Identity, LastRun: last}
			}
		}
	}
	claim := func(o Owner, ok bool) (*Owner, error) {
		switch {
		case c.Adopt && ok && o == mine:
			return nil, nil
		case c.Adopt:
			if ok && o.StateStoreID != mine.StateStoreID && c.Log != nil && !c.CheckOnly {
				c.Log.Warn("adopting a table sink: it now belongs to this job and state; the rows already there stay",
					"sink", j.cfg.Ctx, "previous_state_store", o.StateStore)
			}
			return &mine, nil
		case !ok:
			return &mine, nil
		case o.StateStoreID == mine.StateStoreID:
			return nil, nil
		}
		if heldBy, err := holdsHistory(ctx, o, c); err != nil || heldBy {
			if c.Log != nil && heldBy && !c.CheckOnly {
				c.Log.Info("claiming the table sink for this state store: it holds the history of the one the table's "+
					"ownership row names (state copy)", "sink", j.cfg.Ctx, "previous_state_store", o.StateStore,
					"claimed_by", o.ClaimedBy)
			}
			return &mine, err
		}
		behind := false
		if o.Version > c.Version {
			h := o
			h.Version = c.Version
			var err error
			if behind, err = holdsHistory(ctx, h, c); err != nil {
				return nil, err
			}
		}
		return nil, &sink.OwnedError{Sink: j.cfg.Ctx, Location: j.cfg.Table, Job: c.Job, State: c.Identity,
			Version: c.Version, Owner: o.sinkOwner(c.Job), Table: true, Behind: behind}
	}
	if c.CheckOnly {
		write := claim
		claim = func(o Owner, ok bool) (*Owner, error) {
			_, err := write(o, ok)
			return nil, err
		}
	}
	err = k.WithOwner(ctx, c.Job, claim)
	var owned *sink.OwnedError
	if err != nil && !errors.As(err, &owned) {
		return k.fail("claiming the table", err)
	}
	return err
}

// holdsHistory reports whether c's state holds the history of the store
// an ownership row names: it knows the run that claimed the table, and
// is at the row's version or later.
func holdsHistory(ctx context.Context, o Owner, c sink.Claim) (bool, error) {
	if o.Version > c.Version {
		return false, nil
	}
	if o.ClaimedBy == "" {
		return true, nil
	}
	known, err := c.Known(ctx, o.ClaimedBy)
	if err != nil {
		return false, fmt.Errorf("reading run %s: %w", o.ClaimedBy, err)
	}
	return known, nil
}

// sinkOwner is the row as a sink.Owner, for errors.
func (o Owner) sinkOwner(job string) sink.Owner {
	return sink.Owner{Job: job, StateStoreID: o.StateStoreID, StateStore: o.StateStore, Version: o.Version,
		ClaimedBy: o.ClaimedBy}
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
	id, err := p.State.Identity(ctx)
	if err != nil {
		return err
	}
	err = l.k.PublishKnown(ctx, p.Job, p.RunID, id.ID, known)
	var newer *NewerRunError
	if errors.As(err, &newer) {
		return &sink.OwnedError{Sink: l.k.cfg.Ctx, Location: l.k.cfg.Table, Job: p.Job, State: id, LastRun: newer.Run,
			Publish: p.RunID}
	}
	var notOwner *NotOwnerError
	if errors.As(err, &notOwner) {
		return &sink.OwnedError{Sink: l.k.cfg.Ctx, Location: l.k.cfg.Table, Job: p.Job, State: id,
			Owner: notOwner.Owner.sinkOwner(p.Job), Publish: p.RunID, Table: true}
	}
	if err != nil {
		return fmt.Errorf("publishing run %s into table %s: %w", p.RunID, l.k.cfg.Table, err)
	}
	fault.At(fault.MidPublish)
	return nil
}

func (l *tableLocation) Published(context.Context, string, *slog.Logger) {}

// PurgeName is what output o loaded, as Purge reports it deleted.
func (l *tableLocation) PurgeName(o store.Output) string {
	return fmt.Sprintf("%d rows of table %s", o.Rows, o.Final)
}

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
// Claim reads it), or when its ownership row names another state store
// whose history c's does not hold (see Claim): a copy of the state runs
// the job now, even if its runs loaded nothing yet.
func (l *tableLocation) CheckPurge(ctx context.Context, c sink.Claim) error {
	return l.purgeCheck(ctx, c, false)
}

// TakeForPurge is CheckPurge that, in the same transaction under the
// table's lock, makes the ownership row name c's store at c.Version (the
// version the reset commits): a claim of the copy (or of the store it was
// copied from) either came first and refuses the purge, or comes after and
// finds a version its state does not have.
func (l *tableLocation) TakeForPurge(ctx context.Context, c sink.Claim) error {
	return l.purgeCheck(ctx, c, true)
}

func (l *tableLocation) purgeCheck(ctx context.Context, c sink.Claim, take bool) error {
	last, err := l.k.LastRun(ctx, c.Job)
	if err != nil {
		return err
	}
	if last != "" {
		known, err := c.Known(ctx, last)
		if err != nil {
			return err
		}
		if !known {
			return &sink.OwnedError{Location: l.k.cfg.Table, Job: c.Job, State: c.Identity, LastRun: last, Purge: true}
		}
	}
	err = l.k.WithOwner(ctx, c.Job, func(o Owner, ok bool) (*Owner, error) {
		if ok && o.StateStoreID != c.Identity.ID {
			held, err := holdsHistory(ctx, o, c)
			if err != nil {
				return nil, err
			}
			if !held {
				return nil, &sink.OwnedError{Location: l.k.cfg.Table, Job: c.Job, State: c.Identity, Version: c.Version,
					Owner: o.sinkOwner(c.Job), Purge: true}
			}
		}
		if !take || ok && o.StateStoreID == c.Identity.ID && o.Version >= c.Version {
			return nil, nil
		}
		taken := Owner{StateStoreID: c.Identity.ID, StateStore: store.Redact(c.Identity.Location), Version: c.Version}
		if ok {
			taken.Version = max(o.Version, c.Version)
			if o.StateStoreID == c.Identity.ID {
				taken.ClaimedBy = o.ClaimedBy
			}
		}
		return &taken, nil
	})
	var owned *sink.OwnedError
	if err != nil && !errors.As(err, &owned) {
		return l.k.fail("checking the table's ownership for a purge", err)
	}
	return err
}

var _ sink.Appender = (*JobSink)(nil)

// Appends reports whether the table sink is in append mode: a run may
// then publish in batches (sink.Appender). merge and overwrite make a run
// one batch.
func (j *JobSink) Appends() bool { return j.cfg.Mode == "append" }
