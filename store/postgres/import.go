package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store"
)

var _ store.Importer = (*Store)(nil)

// ImportJob writes a job's history as it was (store.Importer, for
// `tidemark state copy`), in one transaction. The job must have neither
// runs nor versions here. The job's lease row, if it has one, is locked
// for the import and left as it is; without one none is made, so the
// job's next lease is free and its tokens start afresh.
func (s *Store) ImportJob(ctx context.Context, h store.JobHistory) error {
	if err := store.CheckHistory(&h); err != nil {
		return err
	}
	err := s.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM leases WHERE job = $1 FOR UPDATE`, h.Job); err != nil {
			return err
		}
		var n int
		err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM runs WHERE job = $1) + (SELECT count(*) FROM bookmark_versions WHERE job = $1)`,
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
			_, err := tx.Exec(ctx, `
				INSERT INTO bookmark_versions (job, version, run_id, kind, created_at, requested_by) VALUES ($1, $2, $3, $4, $5, $6)`,
				h.Job, v.Version.Version, v.RunID, kind, v.At.UnixNano(), v.By)
			if err != nil {
				return fmt.Errorf("writing version %d: %w", v.Version.Version, err)
			}
			if err := insertStates(ctx, tx, h.Job, v.Version.Version, v.States); err != nil {
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
		return s.fail(fmt.Sprintf("importing job %q", h.Job), err)
	}
	return nil
}

// importRun writes one run's record as it was, with its outputs and actions.
func importRun(ctx context.Context, tx pgx.Tx, r store.RunHistory) error {
	run := r.Run
	sum, err := encodeSummary(run)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `
		INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, job_file, host)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		run.Job, run.RunID, run.Seq, run.Attempt, string(run.Mode), run.Status, run.StartedAt.UnixNano(), nsArg(run.FinishedAt),
		run.Version, run.Undone, run.Purged, sum, run.Error, run.JobFile, run.Host)
	if err != nil {
		return fmt.Errorf("writing run %s: %w", run.RunID, err)
	}
	if err := insertOutputs(ctx, tx, run.Job, run.RunID, r.Outputs); err != nil {
		return err
	}
	return insertActions(ctx, tx, run.Job, run.RunID, r.Actions)
}

// importFiles writes every file record, with the versions that added and
// superseded it, with COPY.
func importFiles(ctx context.Context, tx pgx.Tx, h store.JobHistory) error {
	if len(h.Files) == 0 {
		return nil
	}
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(h.Files) {
			return nil, nil
		}
		f := h.Files[i]
		i++
		var removed any
		if f.Removed != 0 {
			removed = f.Removed
		}
		return []any{h.Job, f.Ctx, f.File.Path, f.File.Size, f.File.MTime, f.File.ETag, f.RunID, f.Added, removed}, nil
	})
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"files"},
		[]string{"job", "ctx", "path", "size", "mtime", "etag", "run_id", "added_version", "removed_version"}, src)
	if err != nil {
		return fmt.Errorf("recording the file records: %w", err)
	}
	return nil
}
