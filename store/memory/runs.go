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
// may be begun once.
func (s *Store) BeginRun(_ context.Context, r store.Run) (store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.insertRun(r)
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
	r.Attempt = 1
	for i := len(j.runs) - 1; i >= 0 && j.runs[i].run.Status != store.StatusSucceeded; i-- {
		if j.runs[i].run.Status == store.StatusFailed {
			r.Attempt++
		}
	}
	r = cloneRun(r)
	rec := &runRec{run: r}
	j.runs = append(j.runs, rec)
	j.byID[r.RunID] = rec
	return r, nil
}

// FailRun marks a running run failed with its summary counts and message.
// A run that already finished is not changed.
func (s *Store) FailRun(_ context.Context, job, runID string, finished time.Time, summary store.Run, msg string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.run(job, runID)
	if err == nil && rec.run.Status != store.StatusRunning {
		err = fmt.Errorf("run already %s", rec.run.Status)
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

// Runs returns the job's runs, newest (highest Seq) first.
func (s *Store) Runs(_ context.Context, job string) ([]store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[job]
	if !ok {
		return nil, nil
	}
	var runs []store.Run
	for i := len(j.runs) - 1; i >= 0; i-- {
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
// Idempotent; store.ErrNotFound for an unknown run.
func (s *Store) MarkPurged(_ context.Context, job, runID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.run(job, runID)
	if err != nil {
		return fmt.Errorf("marking run %s of job %q purged: %w", runID, job, err)
	}
	rec.run.Purged = true
	return nil
}
