package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// BeginRun inserts r as running with the next Seq of its job and its
// Attempt: 1 + the failed runs since the job's last succeeded run. A run id
// may be begun once. token must be the job's current lease token.
func (s *Store) BeginRun(ctx context.Context, token int64, r store.Run) (store.Run, error) {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := checkToken(ctx, tx, r.Job, token); err != nil {
			return err
		}
		var err error
		r, err = insertRun(ctx, tx, r)
		return err
	})
	if err != nil {
		return store.Run{}, fmt.Errorf("beginning run %s of job %q: %w", r.RunID, r.Job, err)
	}
	return r, nil
}

// insertRun inserts r as a running run, assigning Seq and Attempt.
func insertRun(ctx context.Context, tx *sql.Tx, r store.Run) (store.Run, error) {
	if r.Job == "" || r.RunID == "" {
		return store.Run{}, fmt.Errorf("run needs a job and a run id")
	}
	if _, err := getRun(ctx, tx, r.Job, r.RunID); err == nil {
		return store.Run{}, fmt.Errorf("run already exists")
	} else if !errors.Is(err, store.ErrNotFound) {
		return store.Run{}, err
	}
	if r.Mode == "" {
		r.Mode = bookmark.ModeEnable
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Now()
	}
	r.StartedAt = fromNanos(nanos(r.StartedAt))
	r.Status = store.StatusRunning
	r.FinishedAt, r.Version, r.Undone, r.Purged, r.Error = time.Time{}, 0, false, false, ""
	err := tx.QueryRowContext(ctx, `
		SELECT
			(SELECT coalesce(max(seq), 0) + 1 FROM runs WHERE job = ?1),
			(SELECT count(*) + 1 FROM runs WHERE job = ?1 AND status = 'failed' AND seq >
				(SELECT coalesce(max(seq), 0) FROM runs WHERE job = ?1 AND status = 'succeeded'))`,
		r.Job).Scan(&r.Seq, &r.Attempt)
	if err != nil {
		return store.Run{}, err
	}
	sum, err := encodeSummary(r)
	if err != nil {
		return store.Run{}, err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, summary, host)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Job, r.RunID, r.Seq, r.Attempt, string(r.Mode), r.Status, nanos(r.StartedAt), sum, r.Host)
	if err != nil {
		return store.Run{}, err
	}
	return r, nil
}

// FailRun marks a running run failed with its summary counts and message.
// A run that already finished (succeeded or failed) is not changed: failing
// a committed run would hide a bookmark that did move. token must be the
// job's current lease token.
func (s *Store) FailRun(ctx context.Context, job string, token int64, runID string, finished time.Time, summary store.Run, msg string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := checkToken(ctx, tx, job, token); err != nil {
			return err
		}
		r, err := getRun(ctx, tx, job, runID)
		if err != nil {
			return err
		}
		if r.Status != store.StatusRunning {
			return fmt.Errorf("run already %s", r.Status)
		}
		if finished.IsZero() {
			finished = time.Now()
		}
		if summary.JobFile == "" {
			summary.JobFile = r.JobFile // recorded at BeginRun
		}
		sum, err := encodeSummary(summary)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			UPDATE runs SET status = 'failed', finished_at = ?, summary = ?, error = ?
			WHERE job = ? AND run_id = ?`, nanos(finished), sum, msg, job, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording failure of run %s of job %q: %w", runID, job, err)
	}
	return nil
}

// MarkPurged records that the run's published output was deleted.
// Idempotent; store.ErrNotFound for an unknown run. token must be the
// job's current lease token.
func (s *Store) MarkPurged(ctx context.Context, job string, token int64, runID string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := checkToken(ctx, tx, job, token); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE runs SET purged = 1 WHERE job = ? AND run_id = ?`, job, runID)
		if err != nil {
			return err
		}
		return mustAffect(res, store.ErrNotFound)
	})
	if err != nil {
		return fmt.Errorf("marking run %s of job %q purged: %w", runID, job, err)
	}
	return nil
}

// mustAffect returns notFound unless res changed at least one row.
func mustAffect(res sql.Result, notFound error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound
	}
	return nil
}

// getRun reads one run; store.ErrNotFound if there is none.
func getRun(ctx context.Context, tx *sql.Tx, job, runID string) (store.Run, error) {
	return sqlstore.GetRun(ctx, sqlstore.SQL(tx), runColumns, job, runID, "")
}
