package sqlstore

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Runs returns the job's runs, newest (highest Seq) first, bounded by q;
// the UNIQUE (job, seq) index serves the range and the order.
func (c *Core) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	query, args := newestFirst(`SELECT `+c.d.RunColumns()+` FROM runs WHERE job = ?`, "seq", job, q.BeforeSeq, q.Limit)
	runs, err := QueryRuns(ctx, c.d.DB(), query, args...)
	if err != nil {
		return nil, c.failf(err, "listing runs of job %q", job)
	}
	return runs, nil
}

// Run returns one run; store.ErrNotFound if the job has no such run.
func (c *Core) Run(ctx context.Context, job, runID string) (store.Run, error) {
	r, err := GetRun(ctx, c.d.DB(), c.d.RunColumns(), job, runID, "")
	if err != nil {
		return store.Run{}, c.failf(err, "reading run %s of job %q", runID, job)
	}
	return r, nil
}

// GetRun reads one run's columns (a dialect's RunColumns), with lock
// appended to the query (a dialect's row lock, or "");
// store.ErrNotFound if there is none.
func GetRun(ctx context.Context, q Querier, columns, job, runID, lock string) (store.Run, error) {
	runs, err := QueryRuns(ctx, q, `SELECT `+columns+` FROM runs WHERE job = ? AND run_id = ?`+lock, job, runID)
	if err != nil {
		return store.Run{}, err
	}
	if len(runs) == 0 {
		return store.Run{}, fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
	}
	return runs[0], nil
}

// QueryRuns runs a query of the dialect's RunColumns and scans every row.
func QueryRuns(ctx context.Context, q Querier, query string, args ...any) ([]store.Run, error) {
	return queryAll(ctx, q, scanRun, query, args...)
}

// scanRun reads one row of RunColumns.
func scanRun(row Row) (store.Run, error) {
	var (
		r        store.Run
		mode     string
		started  int64
		finished *int64
		sum      []byte
		jobFile  string
	)
	err := row.Scan(&r.Job, &r.RunID, &r.Seq, &r.Attempt, &mode, &r.Status, &started, &finished,
		&r.Version, &r.Undone, &r.Purged, &sum, &r.Error, &jobFile, &r.Host)
	if err != nil {
		return store.Run{}, err
	}
	r.Mode = bookmark.Mode(mode)
	r.StartedAt = FromNanos(started)
	if finished != nil {
		r.FinishedAt = FromNanos(*finished)
	}
	var sm Summary
	if err := DecodeObject(sum, &sm); err != nil {
		return store.Run{}, fmt.Errorf("decoding summary of job %q run %s: %w", r.Job, r.RunID, err)
	}
	if len(sm.Sources) > 0 {
		r.Sources = sm.Sources
	}
	if len(sm.Sinks) > 0 {
		r.Sinks = sm.Sinks
	}
	r.JobFile = jobFile
	if r.JobFile == "" {
		r.JobFile = sm.JobFile
	}
	return r, nil
}

// Jobs lists the jobs that have runs or bookmark versions, sorted.
func (c *Core) Jobs(ctx context.Context) ([]string, error) {
	jobs, err := queryAll(ctx, c.d.DB(), func(row Row) (j string, err error) {
		err = row.Scan(&j)
		return j, err
	}, `SELECT DISTINCT job FROM runs UNION SELECT DISTINCT job FROM bookmark_versions ORDER BY job`)
	if err != nil {
		return nil, c.d.Fail("listing jobs", err)
	}
	return jobs, nil
}
