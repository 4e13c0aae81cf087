package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// runColumns is the column list scanRun expects.
const runColumns = `job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, host`

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

// Runs returns the job's runs, newest (highest Seq) first, bounded by q;
// the primary key's UNIQUE (job, seq) index serves the range and order.
func (s *Store) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	before, limit := q.BeforeSeq, int64(q.Limit)
	if before <= 0 {
		before = math.MaxInt64
	}
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	runs, err := queryRuns(ctx, s.db, `SELECT `+runColumns+` FROM runs WHERE job = ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
		job, before, limit)
	if err != nil {
		return nil, fmt.Errorf("listing runs of job %q: %w", job, err)
	}
	return runs, nil
}

// Run returns one run; store.ErrNotFound if the job has no such run.
func (s *Store) Run(ctx context.Context, job, runID string) (store.Run, error) {
	r, err := getRun(ctx, s.db, job, runID)
	if err != nil {
		return store.Run{}, fmt.Errorf("reading run %s of job %q: %w", runID, job, err)
	}
	return r, nil
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

// getRun reads one run; store.ErrNotFound if there is none.
func getRun(ctx context.Context, q querier, job, runID string) (store.Run, error) {
	runs, err := queryRuns(ctx, q, `SELECT `+runColumns+` FROM runs WHERE job = ? AND run_id = ?`, job, runID)
	if err != nil {
		return store.Run{}, err
	}
	if len(runs) == 0 {
		return store.Run{}, fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
	}
	return runs[0], nil
}

// queryRuns runs a SELECT of runColumns and scans every row.
func queryRuns(ctx context.Context, q querier, query string, args ...any) ([]store.Run, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []store.Run
	for rows.Next() {
		var (
			r                 store.Run
			mode, sum         string
			started, finished int64
			undone, purged    int64
		)
		err := rows.Scan(&r.Job, &r.RunID, &r.Seq, &r.Attempt, &mode, &r.Status, &started, &finished,
			&r.Version, &undone, &purged, &sum, &r.Error, &r.Host)
		if err != nil {
			return nil, err
		}
		r.Mode = bookmark.Mode(mode)
		r.StartedAt, r.FinishedAt = fromNanos(started), fromNanos(finished)
		r.Undone, r.Purged = undone != 0, purged != 0
		s, err := decodeSummary(r.Job, r.RunID, sum)
		if err != nil {
			return nil, err
		}
		r.Sources, r.Sinks, r.JobFile = s.Sources, s.Sinks, s.JobFile
		runs = append(runs, r)
	}
	return runs, rows.Err()
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

// Jobs lists the jobs that have runs or bookmark versions, sorted.
func (s *Store) Jobs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job FROM runs UNION SELECT job FROM bookmark_versions ORDER BY job`)
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	defer rows.Close()
	var jobs []string
	for rows.Next() {
		var j string
		if err := rows.Scan(&j); err != nil {
			return nil, fmt.Errorf("listing jobs: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}
