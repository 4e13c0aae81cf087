package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidemark-etl/tidemark/store"
)

var _ store.Importer = (*Store)(nil)

// ImportJob writes a job's history as it was (store.Importer), in one write
// transaction. The job must have neither runs nor versions here; a lease
// on it stays as it is.
func (s *Store) ImportJob(ctx context.Context, h store.JobHistory) error {
	if err := store.CheckHistory(&h); err != nil {
		return err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM runs WHERE job = ?1) + (SELECT count(*) FROM bookmark_versions WHERE job = ?1)`,
			h.Job).Scan(&n)
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
			if err := insertVersion(ctx, tx, head, kind, v.By); err != nil {
				return err
			}
			if err := insertStates(ctx, tx, h.Job, head.Version, v.States); err != nil {
				return err
			}
		}
		for _, r := range h.Runs {
			if err := importRun(ctx, tx, r); err != nil {
				return err
			}
		}
		if err := importFiles(ctx, tx, h); err != nil {
			return err
		}
		for _, r := range h.Ranges {
			if err := insertRanges(ctx, tx, h.Job, r.RunID, r.Added, []store.RangeRecord{r.RangeRecord}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("importing job %q: %w", h.Job, err)
	}
	return nil
}

// importRun writes one run's record as it was, with its outputs and actions.
func importRun(ctx context.Context, tx *sql.Tx, r store.RunHistory) error {
	run := r.Run
	sum, err := encodeSummary(run)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, host)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		run.Job, run.RunID, run.Seq, run.Attempt, string(run.Mode), run.Status, nanos(run.StartedAt), nanos(run.FinishedAt),
		run.Version, boolInt(run.Undone), boolInt(run.Purged), sum, run.Error, run.Host)
	if err != nil {
		return fmt.Errorf("writing run %s: %w", run.RunID, err)
	}
	if err := insertOutputs(ctx, tx, run.Job, run.RunID, r.Outputs); err != nil {
		return err
	}
	return insertActions(ctx, tx, run.Job, run.RunID, r.Actions)
}

// importFiles writes every file record with the versions that added and
// superseded it.
func importFiles(ctx context.Context, tx *sql.Tx, h store.JobHistory) error {
	if len(h.Files) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `
		INSERT INTO files (job, ctx, path, size, mtime, etag, run_id, added_version, removed_version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, f := range h.Files {
		var removed any
		if f.Removed != 0 {
			removed = f.Removed
		}
		if _, err := stmt.ExecContext(ctx, h.Job, f.Ctx, f.File.Path, f.File.Size, f.File.MTime, f.File.ETag, f.RunID, f.Added, removed); err != nil {
			return fmt.Errorf("recording %s in source %q: %w", f.File.Path, f.Ctx, err)
		}
	}
	return nil
}
