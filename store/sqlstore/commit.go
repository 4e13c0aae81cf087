package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Commit makes c durable in one transaction: it checks the fencing token
// (locking the job's lease) and, with Advance, the base version, writes
// the new bookmark version with the full set of source states and the
// file and range records, finishes the run record, stores the outputs and
// actions and applies the catalog changes (Dialect.ApplyCatalog). On any error
// nothing changed.
//
// The run must be running: begun with BeginRun, or unknown, in which case
// Commit records it (for library users that skip BeginRun). Sources, Added
// and Superseded without Advance are refused rather than dropped.
func (c *Core) Commit(ctx context.Context, cm store.Commit) (store.Head, error) {
	var h store.Head
	err := c.d.Write(ctx, func(q Querier) error {
		var err error
		h, err = c.commit(ctx, q, cm)
		return err
	})
	if err != nil {
		return store.Head{}, c.failf(err, "committing run %s of job %q", cm.Run.RunID, cm.Job)
	}
	return h, nil
}

// commit is Commit inside the write transaction.
func (c *Core) commit(ctx context.Context, q Querier, cm store.Commit) (store.Head, error) {
	if err := store.CheckCommit(&cm); err != nil {
		return store.Head{}, err
	}
	// A running run has no outputs yet; the primary keys refuse the rest.
	if err := store.CheckOutputs(cm, nil); err != nil {
		return store.Head{}, err
	}
	if err := c.d.LockLease(ctx, q, cm.Job, cm.Token); err != nil {
		return store.Head{}, err
	}
	h, err := ReadHead(ctx, q, cm.Job)
	if err != nil {
		return store.Head{}, err
	}
	if err := store.CheckBase(cm, h); err != nil {
		return store.Head{}, err
	}
	run, err := GetRun(ctx, q, c.d.RunColumns(), cm.Job, cm.Run.RunID, c.d.RowLock())
	switch {
	case errors.Is(err, store.ErrNotFound):
		if run, err = c.insertRun(ctx, q, cm.Run); err != nil {
			return store.Head{}, err
		}
	case err != nil:
		return store.Head{}, err
	default:
		if err := store.CheckRunning(run); err != nil {
			return store.Head{}, err
		}
	}

	now, err := c.d.Clock(ctx, q)
	if err != nil {
		return store.Head{}, err
	}
	now = FromNanos(now.UnixNano())
	if cm.Advance {
		h = store.Head{Job: cm.Job, Version: cm.BaseVersion + 1, RunID: cm.Run.RunID, UpdatedAt: now}
		if err := insertVersion(ctx, q, h, store.KindCommit, ""); err != nil {
			return store.Head{}, err
		}
		if err := insertStates(ctx, q, cm.Job, h.Version, cm.Sources); err != nil {
			return store.Head{}, err
		}
		if err := supersede(ctx, q, cm.Job, h.Version, cm.Superseded); err != nil {
			return store.Head{}, err
		}
		if err := c.insertFiles(ctx, q, cm.Job, cm.Run.RunID, h.Version, cm.Added); err != nil {
			return store.Head{}, err
		}
		if err := c.insertRanges(ctx, q, cm.Job, cm.Run.RunID, h.Version, cm.Ranges); err != nil {
			return store.Head{}, err
		}
	}
	finished := cm.Run.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	if err := c.finishRun(ctx, q, run, store.StatusSucceeded, finished, cm.Run, h.Version, ""); err != nil {
		return store.Head{}, err
	}
	if err := c.insertOutputs(ctx, q, cm.Job, cm.Run.RunID, cm.Outputs); err != nil {
		return store.Head{}, err
	}
	if err := insertActions(ctx, q, cm.Job, cm.Run.RunID, cm.Actions); err != nil {
		return store.Head{}, err
	}
	if !cm.Catalog.Empty() {
		if err := c.d.ApplyCatalog(ctx, q, cm.Catalog, now); err != nil {
			return store.Head{}, fmt.Errorf("changing the catalog: %w", err)
		}
	}
	return h, nil
}

// insertVersion records a new bookmark version of kind "commit" or
// "reset" (a rewind is a reset to a run), asked for by by.
func insertVersion(ctx context.Context, q Querier, h store.Head, kind, by string) error {
	_, err := q.Exec(ctx, `
		INSERT INTO bookmark_versions (job, version, run_id, kind, created_at, requested_by) VALUES (?, ?, ?, ?, ?, ?)`,
		h.Job, h.Version, h.RunID, kind, Nanos(h.UpdatedAt), by)
	if err != nil {
		return fmt.Errorf("writing version %d: %w", h.Version, err)
	}
	return nil
}

// insertStates writes the source states of a version, in ctx order.
func insertStates(ctx context.Context, q Querier, job string, version int64, states map[string]bookmark.SourceState) error {
	for _, srcCtx := range slices.Sorted(maps.Keys(states)) {
		data, err := EncodeState(states[srcCtx])
		if err != nil {
			return fmt.Errorf("encoding state of source %q: %w", srcCtx, err)
		}
		_, err = q.Exec(ctx, `INSERT INTO source_states (job, version, ctx, state) VALUES (?, ?, ?, ?)`,
			job, version, srcCtx, data)
		if err != nil {
			return fmt.Errorf("writing state of source %q: %w", srcCtx, err)
		}
	}
	return nil
}

// supersede ends the current record of each path at version. Each record
// must be current and named once: superseding a path the bookmark does
// not hold is a planner bug, and the commit is refused.
func supersede(ctx context.Context, q Querier, job string, version int64, recs []store.FileRecord) error {
	if len(recs) == 0 {
		return nil
	}
	args := make([][]any, len(recs))
	for i, r := range recs {
		args[i] = []any{version, job, r.Ctx, r.File.Path}
	}
	n, err := q.ExecEach(ctx, `
		UPDATE files SET removed_version = ?
		WHERE job = ? AND ctx = ? AND path = ? AND removed_version IS NULL`, args)
	if err != nil {
		if r, ok := failedRow(err, recs); ok {
			return fmt.Errorf("superseding %s in source %q: %w", r.File.Path, r.Ctx, err)
		}
		return fmt.Errorf("superseding file records: %w", err)
	}
	for i, r := range recs {
		if n[i] == 0 {
			return fmt.Errorf("superseding %s in source %q: no current record", r.File.Path, r.Ctx)
		}
	}
	return nil
}

// failedRow returns the record an ExecEach error names, if it names one.
func failedRow[T any](err error, recs []T) (T, bool) {
	var re *RowError
	if errors.As(err, &re) && re.Row >= 0 && re.Row < len(recs) {
		return recs[re.Row], true
	}
	var zero T
	return zero, false
}

// fileColumns are the columns of files a commit or an import writes.
var fileColumns = []string{"job", "ctx", "path", "size", "mtime", "etag", "run_id", "added_version", "removed_version"}

// insertFiles records the files a run added at version in bulk (100k
// records take about a second).
func (c *Core) insertFiles(ctx context.Context, q Querier, job, runID string, version int64, recs []store.FileRecord) error {
	if len(recs) == 0 {
		return nil
	}
	err := q.CopyFrom(ctx, "files", fileColumns, len(recs), func(i int) []any {
		r := recs[i]
		return []any{job, r.Ctx, r.File.Path, r.File.Size, r.File.MTime, r.File.ETag, runID, version, nil}
	})
	if err != nil {
		if r, ok := failedRow(err, recs); ok {
			return fmt.Errorf("recording %s in source %q: %w", r.File.Path, r.Ctx, err)
		}
		return fmt.Errorf("recording the files read: %w", err)
	}
	return nil
}

// insertOutputs records a run's output manifest.
func (c *Core) insertOutputs(ctx context.Context, q Querier, job, runID string, outs []store.Output) error {
	if len(outs) == 0 {
		return nil
	}
	rows := make([][]any, len(outs))
	for i, o := range outs {
		target := c.d.Schema().NoTarget
		if o.Table != nil {
			b, err := json.Marshal(o.Table)
			if err != nil {
				return err
			}
			target = string(b)
		}
		rows[i] = []any{job, runID, o.Sink, o.Root, o.Staged, o.Final, o.Rows, o.Bytes, o.Published,
			string(o.Kind), o.UploadID, target, o.Rejects}
	}
	_, err := q.ExecEach(ctx, `
		INSERT INTO outputs (job, run_id, sink, root, staged, final, rows, bytes, published, kind, upload_id, target, rejects)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, rows)
	if err != nil {
		if o, ok := failedRow(err, outs); ok {
			return fmt.Errorf("recording output %s of sink %q: %w", o.Final, o.Sink, err)
		}
		return fmt.Errorf("recording the outputs: %w", err)
	}
	return nil
}

// insertActions records a run's publish actions in order.
func insertActions(ctx context.Context, q Querier, job, runID string, acts []store.SinkAction) error {
	if len(acts) == 0 {
		return nil
	}
	rows := make([][]any, len(acts))
	for i, a := range acts {
		parts := a.Partitions
		if parts == nil {
			parts = []string{}
		}
		data, err := json.Marshal(parts)
		if err != nil {
			return err
		}
		rows[i] = []any{job, runID, i, a.Sink, a.Root, a.Mode, string(data)}
	}
	_, err := q.ExecEach(ctx, `INSERT INTO actions (job, run_id, n, sink, root, mode, partitions) VALUES (?, ?, ?, ?, ?, ?, ?)`, rows)
	if err != nil {
		if a, ok := failedRow(err, acts); ok {
			return fmt.Errorf("recording %s action of sink %q: %w", a.Mode, a.Sink, err)
		}
		return fmt.Errorf("recording the publish actions: %w", err)
	}
	return nil
}

// insertRanges records the key ranges a run read at version.
func (c *Core) insertRanges(ctx context.Context, q Querier, job, runID string, version int64, rs []store.RangeRecord) error {
	for _, r := range rs {
		var rng any = r.Range
		if c.d.Schema().TextRange {
			rng = string(r.Range)
		}
		_, err := q.Exec(ctx, `
			INSERT INTO ranges (job, ctx, run_id, range, rows, added_version) VALUES (?, ?, ?, ?, ?, ?)`,
			job, r.Ctx, runID, rng, r.Rows, version)
		if err != nil {
			return fmt.Errorf("recording the range of source %q: %w", r.Ctx, err)
		}
	}
	return nil
}
