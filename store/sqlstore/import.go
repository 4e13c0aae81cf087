package sqlstore

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/store"
)

// ImportJob writes a job's history as it was (store.Importer), in one
// write transaction. The job must have neither runs nor versions here. A
// lease on it stays as it is (Dialect.LockJob locks it for the
// import where the dialect locks rows); without one none is made, so the job's
// next lease is free.
func (c *Core) ImportJob(ctx context.Context, h store.JobHistory) error {
	if err := store.CheckHistory(&h); err != nil {
		return err
	}
	err := c.d.Write(ctx, func(q Querier) error {
		if err := c.d.LockJob(ctx, q, h.Job); err != nil {
			return err
		}
		var n int
		err := q.QueryRow(ctx, `SELECT (SELECT count(*) FROM runs WHERE job = ?) + (SELECT count(*) FROM bookmark_versions WHERE job = ?)`,
			h.Job, h.Job).Scan(&n)
		if err != nil {
			return err
		}
		if n > 0 {
			return store.ErrJobExists
		}
		for _, v := range h.Versions {
			kind := v.Kind
			if kind == store.KindRewind {
				kind = store.KindReset // a rewind is a reset to a run
			}
			head := store.Head{Job: h.Job, Version: v.Version.Version, RunID: v.RunID, UpdatedAt: v.At}
			if err := insertVersion(ctx, q, head, kind, v.By); err != nil {
				return err
			}
			if err := insertStates(ctx, q, h.Job, head.Version, v.States); err != nil {
				return err
			}
		}
		for _, r := range h.Runs {
			if err := c.importRun(ctx, q, r); err != nil {
				return err
			}
		}
		if err := importFiles(ctx, q, h); err != nil {
			return err
		}
		for _, r := range h.Ranges {
			if err := c.insertRanges(ctx, q, h.Job, r.RunID, r.Added, []store.RangeRecord{r.RangeRecord}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return c.failf(err, "importing job %q", h.Job)
	}
	return nil
}

// importRun writes one run's record as it was, with its outputs and actions.
func (c *Core) importRun(ctx context.Context, q Querier, r store.RunHistory) error {
	run := r.Run
	sum, err := c.encodeSummary(run)
	if err != nil {
		return err
	}
	finished := c.d.Schema().NoTime
	if !run.FinishedAt.IsZero() {
		finished = run.FinishedAt.UnixNano()
	}
	_, err = q.Exec(ctx, `
		INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, host`+c.jobFileColumn()+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`+c.jobFileValue()+`)`,
		c.withJobFile(run, run.Job, run.RunID, run.Seq, run.Attempt, string(run.Mode), run.Status, Nanos(run.StartedAt), finished,
			run.Version, run.Undone, run.Purged, sum, run.Error, run.Host)...)
	if err != nil {
		return fmt.Errorf("writing run %s: %w", run.RunID, err)
	}
	if err := c.insertOutputs(ctx, q, run.Job, run.RunID, r.Outputs); err != nil {
		return err
	}
	return insertActions(ctx, q, run.Job, run.RunID, r.Actions)
}

// importFiles writes every file record with the versions that added and
// superseded it, in bulk.
func importFiles(ctx context.Context, q Querier, h store.JobHistory) error {
	if len(h.Files) == 0 {
		return nil
	}
	err := q.CopyFrom(ctx, "files", fileColumns, len(h.Files), func(i int) []any {
		f := h.Files[i]
		var removed any
		if f.Removed != 0 {
			removed = f.Removed
		}
		return []any{h.Job, f.Ctx, f.File.Path, f.File.Size, f.File.MTime, f.File.ETag, f.RunID, f.Added, removed}
	})
	if err != nil {
		if f, ok := failedRow(err, h.Files); ok {
			return fmt.Errorf("recording %s in source %q: %w", f.File.Path, f.Ctx, err)
		}
		return fmt.Errorf("recording the file records: %w", err)
	}
	return nil
}
