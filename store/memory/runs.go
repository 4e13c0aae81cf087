package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// BeginRun records r as running with the next Seq of its job and its
// Attempt: 1 + the failed runs since the job's last succeeded run. A run id
// may be begun once. token must be the job's current lease token.
func (s *Store) BeginRun(_ context.Context, token int64, r store.Run) (store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.job(r.Job).checkToken(r.Job, token)
	if err == nil {
		r, err = s.insertRun(r)
	}
	if err != nil {
		return store.Run{}, fmt.Errorf("beginning run %s of job %q: %w", r.RunID, r.Job, err)
	}
	return cloneRun(r), nil
}

// insertRun records r as running, assigning Seq and Attempt. s.mu is held.
func (s *Store) insertRun(r store.Run) (store.Run, error) {
	if r.Job == "" || r.RunID == "" {
		return r, fmt.Errorf("run needs a job and a run id")
	}
	j := s.job(r.Job)
	if _, ok := j.byID[r.RunID]; ok {
		return r, fmt.Errorf("run already exists")
	}
	if r.Mode == "" {
		r.Mode = bookmark.ModeEnable
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = s.clock()
	}
	r.StartedAt = utc(r.StartedAt)
	r.Status = store.StatusRunning
	r.FinishedAt, r.Version, r.Undone, r.Purged, r.Error = time.Time{}, 0, false, false, ""
	r.Seq = int64(len(j.runs)) + 1
	r.Attempt = store.NextAttempt(func(yield func(string) bool) {
		for i := len(j.runs) - 1; i >= 0; i-- {
			if !yield(j.runs[i].run.Status) {
				return
			}
		}
	})
	r = cloneRun(r)
	rec := &runRec{run: r}
	j.runs = append(j.runs, rec)
	j.byID[r.RunID] = rec
	return r, nil
}

// FailRun marks a running run failed with its summary counts and message.
// A run that already finished is not changed. token must be the job's
// current lease token.
func (s *Store) FailRun(_ context.Context, job string, token int64, runID string, finished time.Time, summary store.Run, msg string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.fenced(job, token, runID)
	if err == nil {
		err = store.CheckRunning(rec.run)
	}
	if err != nil {
		return fmt.Errorf("recording failure of run %s of job %q: %w", runID, job, err)
	}
	if finished.IsZero() {
		finished = s.clock()
	}
	r := &rec.run
	r.Status, r.FinishedAt, r.Error = store.StatusFailed, utc(finished), msg
	r.Sources, r.Sinks = cloneCounts(summary.Sources), cloneCounts(summary.Sinks)
	return nil
}

// fenced returns one run's record if token is the job's current lease
// token: store.ErrLeaseLost if not, store.ErrNotFound for an unknown run.
// s.mu is held.
func (s *Store) fenced(job string, token int64, runID string) (*runRec, error) {
	if err := s.job(job).checkToken(job, token); err != nil {
		return nil, err
	}
	return s.run(job, runID)
}

// run returns one run's record; store.ErrNotFound if there is none. s.mu
// is held.
func (s *Store) run(job, runID string) (*runRec, error) {
	if j, ok := s.jobs[job]; ok {
		if rec, ok := j.byID[runID]; ok {
			return rec, nil
		}
	}
	return nil, fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
}

// Runs returns the job's runs, newest (highest Seq) first, bounded by q.
func (s *Store) Runs(_ context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok {
		return nil, nil
	}
	top := int64(len(j.runs)) // runs[i] has Seq i+1
	if q.BeforeSeq > 0 {
		top = min(top, q.BeforeSeq-1)
	}
	var runs []store.Run
	for i := top - 1; i >= 0 && (q.Limit <= 0 || len(runs) < q.Limit); i-- {
		runs = append(runs, cloneRun(j.runs[i].run))
	}
	return runs, nil
}

// Run returns one run; store.ErrNotFound if the job has no such run.
func (s *Store) Run(_ context.Context, job, runID string) (store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.run(job, runID)
	if err != nil {
		return store.Run{}, fmt.Errorf("reading run %s of job %q: %w", runID, job, err)
	}
	return cloneRun(rec.run), nil
}

// MarkPurged records that the run's published output was deleted.
// Idempotent; store.ErrNotFound for an unknown run. token must be the
// job's current lease token.
func (s *Store) MarkPurged(_ context.Context, job string, token int64, runID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.fenced(job, token, runID)
	if err != nil {
		return fmt.Errorf("marking run %s of job %q purged: %w", runID, job, err)
	}
	rec.run.Purged = true
	return nil
}
