package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// runColumns is the column list scanRun expects.
const runColumns = `job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error, job_file, host`

// summary is the JSON stored in runs.summary.
type summary struct {
	Sources map[string]store.Count `json:"sources,omitempty"`
	Sinks   map[string]store.Count `json:"sinks,omitempty"`
}

func encodeSummary(r store.Run) ([]byte, error) {
	return json.Marshal(summary{Sources: r.Sources, Sinks: r.Sinks})
}

// BeginRun inserts r as running with the next Seq of its job and its
// Attempt, under the job's lease.
func (s *Store) BeginRun(ctx context.Context, token int64, r store.Run) (store.Run, error) {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := lockLease(ctx, tx, r.Job, token); err != nil {
			return err
		}
		var err error
		r, err = insertRun(ctx, tx, r)
		return err
	})
	if err != nil {
		return store.Run{}, s.fail(fmt.Sprintf("beginning run %s of job %q", r.RunID, r.Job), err)
	}
	return r, nil
}

// insertRun inserts r as a running run, assigning Seq and Attempt (1 + the
// failed runs since the job's last succeeded one). The caller holds the
// job's lease row, so no other run of the job takes a seq meanwhile. A
// zero StartedAt is stamped by the database.
//
// Both come from the newest end of the (job, seq) index, whatever the
// job's history: Seq from its greatest entry, Attempt from the newest run
// that finished (its attempt + 1 if it failed, else 1). Counting the failed
// runs above the last success instead left the plan to the planner's
// estimates, and near a tie it scanned every run of the job.
func insertRun(ctx context.Context, tx pgx.Tx, r store.Run) (store.Run, error) {
	if r.Job == "" || r.RunID == "" {
		return store.Run{}, fmt.Errorf("run needs a job and a run id")
	}
	if r.Mode == "" {
		r.Mode = bookmark.ModeEnable
	}
	r.Status = store.StatusRunning
	r.FinishedAt, r.Version, r.Undone, r.Purged, r.Error = time.Time{}, 0, false, false, ""
	sum, err := encodeSummary(r)
	if err != nil {
		return store.Run{}, err
	}
	var started int64
	err = tx.QueryRow(ctx, `
		WITH last AS (
			SELECT status, attempt FROM runs WHERE job = $1 AND status <> 'running' ORDER BY seq DESC LIMIT 1)
		INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, summary, job_file, host)
		SELECT $1, $2,
			coalesce((SELECT max(seq) FROM runs WHERE job = $1), 0) + 1,
			coalesce((SELECT attempt + 1 FROM last WHERE status = 'failed'), 1),
			$3, 'running', coalesce($4, `+nowNS+`), $5, $6, $7
		ON CONFLICT (job, run_id) DO NOTHING
		RETURNING seq, attempt, started_at`,
		r.Job, r.RunID, string(r.Mode), nsArg(r.StartedAt), sum, r.JobFile, r.Host).Scan(&r.Seq, &r.Attempt, &started)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Run{}, fmt.Errorf("run already exists")
	}
	if err != nil {
		return store.Run{}, err
	}
	r.StartedAt = fromNS(&started)
	return r, nil
}

// FailRun marks a running run failed with its summary counts and message.
// A run that already finished is not changed. finished is the run's own
// record (a zero one is stamped by the database); it decides nothing.
func (s *Store) FailRun(ctx context.Context, job string, token int64, runID string, finished time.Time, sum store.Run, msg string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := lockLease(ctx, tx, job, token); err != nil {
			return err
		}
		r, err := getRun(ctx, tx, job, runID, true)
		if err != nil {
			return err
		}
		if r.Status != store.StatusRunning {
			return fmt.Errorf("run already %s", r.Status)
		}
		data, err := encodeSummary(sum)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			UPDATE runs SET status = 'failed', finished_at = coalesce($3, `+nowNS+`), summary = $4, error = $5,
				job_file = CASE WHEN $6 = '' THEN job_file ELSE $6 END, host = CASE WHEN $7 = '' THEN host ELSE $7 END
			WHERE job = $1 AND run_id = $2`, job, runID, nsArg(finished), data, msg, sum.JobFile, sum.Host)
		return err
	})
	if err != nil {
		return s.fail(fmt.Sprintf("recording failure of run %s of job %q", runID, job), err)
	}
	return nil
}

// Runs returns the job's runs newest first, bounded by q; the UNIQUE
// (job, seq) index serves the range and the order.
func (s *Store) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	before, limit := q.BeforeSeq, int64(q.Limit)
	if before <= 0 {
		before = 1<<63 - 1
	}
	if limit <= 0 {
		limit = 1<<63 - 1
	}
	runs, err := queryRuns(ctx, s.pool, `SELECT `+runColumns+` FROM runs WHERE job = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`,
		job, before, limit)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("listing runs of job %q", job), err)
	}
	return runs, nil
}

// Run returns one run; store.ErrNotFound if the job has no such run.
func (s *Store) Run(ctx context.Context, job, runID string) (store.Run, error) {
	r, err := getRun(ctx, s.pool, job, runID, false)
	if err != nil {
		return store.Run{}, s.fail(fmt.Sprintf("reading run %s of job %q", runID, job), err)
	}
	return r, nil
}

// MarkPurged records that the run's published output was deleted.
func (s *Store) MarkPurged(ctx context.Context, job string, token int64, runID string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := lockLease(ctx, tx, job, token); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE runs SET purged = true WHERE job = $1 AND run_id = $2`, job, runID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return s.fail(fmt.Sprintf("marking run %s of job %q purged", runID, job), err)
	}
	return nil
}

// getRun reads one run, locking its row with forUpdate; store.ErrNotFound
// if there is none.
func getRun(ctx context.Context, q queryer, job, runID string, forUpdate bool) (store.Run, error) {
	query := `SELECT ` + runColumns + ` FROM runs WHERE job = $1 AND run_id = $2`
	if forUpdate {
		query += ` FOR UPDATE`
	}
	runs, err := queryRuns(ctx, q, query, job, runID)
	if err != nil {
		return store.Run{}, err
	}
	if len(runs) == 0 {
		return store.Run{}, fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
	}
	return runs[0], nil
}

// queryRuns runs a SELECT of runColumns and scans every row.
func queryRuns(ctx context.Context, q queryer, query string, args ...any) ([]store.Run, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Run, error) {
		var (
			r        store.Run
			mode     string
			started  int64
			finished *int64
			sum      []byte
		)
		err := row.Scan(&r.Job, &r.RunID, &r.Seq, &r.Attempt, &mode, &r.Status, &started, &finished,
			&r.Version, &r.Undone, &r.Purged, &sum, &r.Error, &r.JobFile, &r.Host)
		if err != nil {
			return store.Run{}, err
		}
		r.Mode = bookmark.Mode(mode)
		r.StartedAt, r.FinishedAt = fromNS(&started), fromNS(finished)
		var sm summary
		if err := decodeObject(sum, &sm); err != nil {
			return store.Run{}, fmt.Errorf("decoding summary of job %q run %s: %w", r.Job, r.RunID, err)
		}
		if len(sm.Sources) > 0 {
			r.Sources = sm.Sources
		}
		if len(sm.Sinks) > 0 {
			r.Sinks = sm.Sinks
		}
		return r, nil
	})
}

// Jobs lists the jobs that have runs or bookmark versions, sorted.
func (s *Store) Jobs(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT job FROM runs UNION SELECT DISTINCT job FROM bookmark_versions ORDER BY job`)
	if err != nil {
		return nil, s.fail("listing jobs", err)
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, s.fail("listing jobs", err)
	}
	return jobs, nil
}
