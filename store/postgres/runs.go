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
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

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
func getRun(ctx context.Context, tx pgx.Tx, job, runID string, forUpdate bool) (store.Run, error) {
	lock := ""
	if forUpdate {
		lock = " FOR UPDATE"
	}
	return sqlstore.GetRun(ctx, pgQ(tx), runColumns, job, runID, lock)
}

// readTx runs fn in a read-only repeatable-read transaction: one snapshot
// across its statements.
func (s *Store) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(tx)
}
