package memsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// location is a run log opened from its output records (Root is its
// folder).
type location struct {
	dir string
}

var (
	_ sink.Location     = (*location)(nil)
	_ sink.PurgeChecker = (*location)(nil)
)

func (l *location) ownerFile() string { return filepath.Join(l.dir, "_tidemark", "owner.json") }

// readOwner is the log's ownership record (ok false: none yet).
func (l *location) readOwner() (o sink.Owner, ok bool, err error) {
	b, err := os.ReadFile(l.ownerFile())
	if os.IsNotExist(err) {
		return o, false, nil
	}
	if err != nil {
		return o, false, fmt.Errorf("reading the ownership record of run log %s: %w", l.dir, err)
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, false, fmt.Errorf("reading the ownership record of run log %s: %w", l.dir, err)
	}
	return o, true, nil
}

// writeOwner replaces the record (tmp, then rename).
func (l *location) writeOwner(o sink.Owner) error {
	if err := os.MkdirAll(filepath.Dir(l.ownerFile()), 0o755); err != nil {
		return fmt.Errorf("writing the ownership record of run log %s: %w", l.dir, err)
	}
	b, _ := json.Marshal(o)
	tmp := l.ownerFile() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing the ownership record of run log %s: %w", l.dir, err)
	}
	if err := os.Rename(tmp, l.ownerFile()); err != nil {
		return fmt.Errorf("writing the ownership record of run log %s: %w", l.dir, err)
	}
	return nil
}

// check refuses c where the record names another job or state store, or
// a run c's state does not know; a record of c's job and store passes.
func (l *location) check(ctx context.Context, ctxName string, c sink.Claim, o sink.Owner) error {
	refuse := &sink.OwnedError{Sink: ctxName, Location: l.dir, Job: c.Job, State: c.Identity, Version: c.Version, Owner: o}
	if !o.Owns(c.Job, c.Identity) {
		return refuse
	}
	if n := o.Newest(); n != "" && c.Known != nil {
		known, err := c.Known(ctx, n)
		if err != nil {
			return err
		}
		if !known {
			refuse.UnknownRun = n
			return refuse
		}
	}
	return nil
}

// claim makes the log the job's, as sink.Sink.Claim says.
func (l *location) claim(ctx context.Context, ctxName string, c sink.Claim) error {
	o, ok, err := l.readOwner()
	if err != nil {
		return err
	}
	if ok && !c.Adopt {
		if err := l.check(ctx, ctxName, c, o); err != nil {
			return err
		}
	}
	if c.CheckOnly || ok && o.Owns(c.Job, c.Identity) && !c.Adopt {
		return nil
	}
	now := time.Now().UTC()
	return l.writeOwner(sink.Owner{Job: c.Job, StateStoreID: c.Identity.ID, StateStore: c.Identity.Location,
		Version: c.Version, ClaimedBy: c.RunID, CreatedAt: now, UpdatedAt: now})
}

// CheckPurge refuses a purge of another job's or store's log.
func (l *location) CheckPurge(ctx context.Context, c sink.Claim) error {
	o, ok, err := l.readOwner()
	if err != nil || !ok {
		return err
	}
	if err := l.check(ctx, "", c, o); err != nil {
		var owned *sink.OwnedError
		if errors.As(err, &owned) {
			owned.Purge = true
		}
		return err
	}
	return nil
}

// TakeForPurge is CheckPurge, then the record raised to c.Version.
func (l *location) TakeForPurge(ctx context.Context, c sink.Claim) error {
	if err := l.CheckPurge(ctx, c); err != nil {
		return err
	}
	o, ok, err := l.readOwner()
	if err != nil || !ok {
		return err
	}
	o.Version, o.UpdatedAt = c.Version, time.Now().UTC()
	return l.writeOwner(o)
}

// Publish joins the run's staged files into RUN.jsonl (tmp, then
// rename). Idempotent: a published file stays; a run whose file is
// neither published nor staged is lost.
func (l *location) Publish(_ context.Context, p sink.Publication) error {
	if len(p.Outputs) == 0 {
		return nil
	}
	o, ok, err := l.readOwner()
	if err != nil {
		return err
	}
	if ok && o.StateStoreID != "" {
		if id, err := p.State.Identity(context.Background()); err == nil && !o.Owns(p.Job, id) {
			return &sink.OwnedError{Sink: p.Outputs[0].Sink, Location: l.dir, Job: p.Job, State: id, Owner: o, Publish: p.RunID}
		}
	}
	final := filepath.Join(l.dir, p.Outputs[0].Final)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	var data []byte
	for _, out := range p.Outputs {
		b, err := os.ReadFile(filepath.Join(l.dir, filepath.FromSlash(out.Staged)))
		if os.IsNotExist(err) {
			return fmt.Errorf("publishing run %s into run log %s: %s: %w", p.RunID, l.dir, out.Staged, sink.ErrOutputLost)
		}
		if err != nil {
			return fmt.Errorf("publishing run %s into run log %s: %w", p.RunID, l.dir, err)
		}
		data = append(data, b...)
	}
	if err := os.WriteFile(final+".tmp", data, 0o644); err != nil {
		return fmt.Errorf("publishing run %s into run log %s: %w", p.RunID, l.dir, err)
	}
	if err := os.Rename(final+".tmp", final); err != nil {
		return fmt.Errorf("publishing run %s into run log %s: %w", p.RunID, l.dir, err)
	}
	if ok && p.Run.Mode == bookmark.ModeEnable {
		o.LastRun, o.UpdatedAt = p.RunID, time.Now().UTC()
		return l.writeOwner(o)
	}
	return nil
}

// Published deletes the run's staging.
func (l *location) Published(_ context.Context, runID string, log *slog.Logger) {
	if err := os.RemoveAll(filepath.Join(stagingDir(l.dir), runID)); err != nil {
		log.Warn("deleting a published run's staging", "log", l.dir, "run", runID, "err", err)
	}
}

// PurgeName is what output o published, as Purge reports it deleted.
func (l *location) PurgeName(o store.Output) string {
	return fmt.Sprintf("run log %s: %s", l.dir, o.Final)
}

// Purge deletes the run's file.
func (l *location) Purge(_ context.Context, _, runID string, outs []store.Output, log *slog.Logger) (sink.Purged, error) {
	var p sink.Purged
	done := map[string]bool{}
	for _, o := range outs {
		if done[o.Final] {
			continue
		}
		done[o.Final] = true
		err := os.Remove(filepath.Join(l.dir, o.Final))
		switch {
		case os.IsNotExist(err):
			p.Gone = append(p.Gone, l.PurgeName(o))
		case err != nil:
			return p, fmt.Errorf("purging run %s from run log %s: %w", runID, l.dir, err)
		default:
			log.Info("deleted", "run", runID, "log", l.dir, "file", o.Final)
			p.Deleted = append(p.Deleted, l.PurgeName(o))
		}
	}
	return p, nil
}

// Close does nothing.
func (l *location) Close() error { return nil }
