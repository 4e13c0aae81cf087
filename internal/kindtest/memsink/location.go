package memsink

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

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

// ownerPlace is the log's folder as the claim rule (package sink) sees
// it: its ownership record, _tidemark/owner.json, written only
// conditionally on what was read.
func (l *location) ownerPlace(ctx context.Context, sinkCtx string) (sink.Place, error) {
	return sink.OpenPlace(ctx, sinkCtx, l.dir)
}

// claim makes the log the job's, as sink.Sink.Claim says.
func (l *location) claim(ctx context.Context, ctxName string, c sink.Claim) error {
	p, err := l.ownerPlace(ctx, ctxName)
	if err != nil {
		return err
	}
	return sink.ClaimAt(ctx, p, c)
}

// CheckPurge refuses a purge of another job's or store's log.
func (l *location) CheckPurge(ctx context.Context, c sink.Claim) error {
	p, err := l.ownerPlace(ctx, "")
	if err != nil {
		return err
	}
	return sink.CheckPurgeAt(ctx, p, c)
}

// TakeForPurge is CheckPurge, then the record taken over at c.Version.
func (l *location) TakeForPurge(ctx context.Context, c sink.Claim) error {
	p, err := l.ownerPlace(ctx, "")
	if err != nil {
		return err
	}
	return sink.TakeForPurgeAt(ctx, p, c)
}

// Publish joins the run's staged files into RUN.jsonl (tmp, then
// rename). Idempotent: a published file stays; a run whose file is
// neither published nor staged is lost.
func (l *location) Publish(ctx context.Context, p sink.Publication) error {
	if len(p.Outputs) == 0 {
		return nil
	}
	place, err := l.ownerPlace(ctx, p.Outputs[0].Sink)
	if err != nil {
		return err
	}
	if err := sink.RecordPublished(ctx, place, p); err != nil {
		return err
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
