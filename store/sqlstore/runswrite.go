package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// BeginRun inserts r as running with the next Seq of its job and its
// Attempt (Dialect.NextRun), under the job's lease. A run id may be begun
// once. A zero StartedAt is stamped by the store's clock.
func (c *Core) BeginRun(ctx context.Context, token int64, r store.Run) (store.Run, error) {
	err := c.d.Write(ctx, func(q Querier) error {
		if err := c.d.LockLease(ctx, q, r.Job, token); err != nil {
			return err
		}
		var err error
		r, err = c.insertRun(ctx, q, r)
		return err
	})
	if err != nil {
		return store.Run{}, c.failf(err, "beginning run %s of job %q", r.RunID, r.Job)
	}
	return r, nil
}

// insertRun inserts r as a running run, assigning Seq and Attempt. The
// caller holds the job's lease, so no other run of the job takes a seq
// meanwhile.
func (c *Core) insertRun(ctx context.Context, q Querier, r store.Run) (store.Run, error) {
	if r.Job == "" || r.RunID == "" {
		return store.Run{}, fmt.Errorf("run needs a job and a run id")
	}
	if _, err := GetRun(ctx, q, c.d.RunColumns(), r.Job, r.RunID, ""); err == nil {
		return store.Run{}, fmt.Errorf("run already exists")
	} else if !errors.Is(err, store.ErrNotFound) {
		return store.Run{}, err
	}
	if r.Mode == "" {
		r.Mode = bookmark.ModeEnable
	}
	if r.StartedAt.IsZero() {
		now, err := c.d.Clock(ctx, q)
		if err != nil {
			return store.Run{}, err
		}
		r.StartedAt = now
	}
	r.StartedAt = FromNanos(r.StartedAt.UnixNano())
	r.Status = store.StatusRunning
	r.FinishedAt, r.Version, r.Undone, r.Purged, r.Error = time.Time{}, 0, false, false, ""
	var err error
	if r.Seq, r.Attempt, err = c.d.NextRun(ctx, q, r.Job); err != nil {
		return store.Run{}, err
	}
	sum, err := c.encodeSummary(r)
	if err != nil {
		return store.Run{}, err
	}
	_, err = q.Exec(ctx, `
		INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, summary, host`+c.jobFileColumn()+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?`+c.jobFileValue()+`)`,
		c.withJobFile(r, r.Job, r.RunID, r.Seq, r.Attempt, string(r.Mode), r.Status, Nanos(r.StartedAt),
			c.d.Schema().NoTime, sum, r.Host)...)
	if err != nil {
		return store.Run{}, err
	}
	return r, nil
}

// encodeSummary serialises a run's per-source and per-sink counts (and
// its job file, where runs has no column for it).
func (c *Core) encodeSummary(r store.Run) (string, error) {
	s := Summary{Sources: r.Sources, Sinks: r.Sinks}
	if !c.d.Schema().JobFileColumn {
		s.JobFile = r.JobFile
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// jobFileColumn, jobFileValue and withJobFile add runs.job_file to an
// INSERT where the schema has it.
func (c *Core) jobFileColumn() string {
	if c.d.Schema().JobFileColumn {
		return ", job_file"
	}
	return ""
}

func (c *Core) jobFileValue() string {
	if c.d.Schema().JobFileColumn {
		return ", ?"
	}
	return ""
}

func (c *Core) withJobFile(r store.Run, args ...any) []any {
	if c.d.Schema().JobFileColumn {
		return append(args, r.JobFile)
	}
	return args
}

// finishRun records a running run's end: its status, time (zero: the
// store's clock), counts, version and error. The job file and host the
// run was begun with stay unless sum names others.
func (c *Core) finishRun(ctx context.Context, q Querier, begun store.Run, status string, finished time.Time, sum store.Run, version int64, msg string) error {
	if finished.IsZero() {
		now, err := c.d.Clock(ctx, q)
		if err != nil {
			return err
		}
		finished = now
	}
	if sum.JobFile == "" {
		sum.JobFile = begun.JobFile
	}
	if sum.Host == "" {
		sum.Host = begun.Host
	}
	data, err := c.encodeSummary(sum)
	if err != nil {
		return err
	}
	set := `status = ?, finished_at = ?, summary = ?, version = ?, error = ?, host = ?`
	args := []any{status, Nanos(finished), data, version, msg, sum.Host}
	if c.d.Schema().JobFileColumn {
		set += `, job_file = ?`
		args = append(args, sum.JobFile)
	}
	_, err = q.Exec(ctx, `UPDATE runs SET `+set+` WHERE job = ? AND run_id = ?`, append(args, begun.Job, begun.RunID)...)
	if err != nil {
		return fmt.Errorf("finishing the run record: %w", err)
	}
	return nil
}

// FailRun marks a running run failed with its summary counts and message.
// A run that already finished (succeeded or failed) is not changed:
// failing a committed run would hide a bookmark that did move.
func (c *Core) FailRun(ctx context.Context, job string, token int64, runID string, finished time.Time, summary store.Run, msg string) error {
	err := c.d.Write(ctx, func(q Querier) error {
		if err := c.d.LockLease(ctx, q, job, token); err != nil {
			return err
		}
		r, err := GetRun(ctx, q, c.d.RunColumns(), job, runID, c.d.RowLock())
		if err != nil {
			return err
		}
		if err := store.CheckRunning(r); err != nil {
			return err
		}
		return c.finishRun(ctx, q, r, store.StatusFailed, finished, summary, r.Version, msg)
	})
	if err != nil {
		return c.failf(err, "recording failure of run %s of job %q", runID, job)
	}
	return nil
}

// MarkPurged records that the run's published output was deleted.
// Idempotent; store.ErrNotFound for an unknown run.
func (c *Core) MarkPurged(ctx context.Context, job string, token int64, runID string) error {
	err := c.d.Write(ctx, func(q Querier) error {
		if err := c.d.LockLease(ctx, q, job, token); err != nil {
			return err
		}
		n, err := q.Exec(ctx, `UPDATE runs SET purged = `+c.d.Bool(true)+` WHERE job = ? AND run_id = ?`, job, runID)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return c.failf(err, "marking run %s of job %q purged", runID, job)
	}
	return nil
}

// MarkPublished marks all of a run's outputs published. Idempotent;
// store.ErrNotFound for an unknown run.
func (c *Core) MarkPublished(ctx context.Context, job string, token int64, runID string) error {
	err := c.d.Write(ctx, func(q Querier) error {
		if err := c.d.LockLease(ctx, q, job, token); err != nil {
			return err
		}
		if _, err := GetRun(ctx, q, c.d.RunColumns(), job, runID, ""); err != nil {
			return err
		}
		_, err := q.Exec(ctx, `UPDATE outputs SET published = `+c.d.Bool(true)+` WHERE job = ? AND run_id = ? AND published = `+c.d.Bool(false), job, runID)
		return err
	})
	if err != nil {
		return c.failf(err, "marking outputs of run %s of job %q published", runID, job)
	}
	return nil
}
