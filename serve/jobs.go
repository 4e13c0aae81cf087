package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/serve/view"
	"github.com/tidemark-etl/tidemark/store"
)

// jobSummary is one job in GET /api/v1/jobs.
type jobSummary struct {
	Job          string               `json:"job"`
	Version      int64                `json:"version"`
	RunID        string               `json:"run_id"`
	LastRun      *view.Run            `json:"last_run"`
	Backlog      *tidemark.PlanResult `json:"backlog"`
	BacklogError string               `json:"backlog_error,omitempty"`
	// Recent counts the job's last recentRuns runs by status.
	Recent *recentRuns `json:"recent,omitempty"`
	// LastReadRun is the newest succeeded run that read something (rows or
	// files) among the last lastReadLimit runs; absent when none did.
	LastReadRun *view.Run `json:"last_read_run,omitempty"`
}

// recentRuns is how many of a job's last runs there are (at most
// recentLimit) and how many of them succeeded and failed (the rest are
// running).
type recentRuns struct {
	Runs      int `json:"runs"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// recentLimit is how many of a job's last runs its success rate counts,
// and lastReadLimit how many are looked through for the last that read
// something.
const (
	recentLimit   = 20
	lastReadLimit = 200
)

// jobDetail is GET /api/v1/jobs/{job}.
type jobDetail struct {
	Job      string        `json:"job"`
	Version  int64         `json:"version"`
	RunID    string        `json:"run_id"`
	Bookmark view.Bookmark `json:"bookmark"`
	LastRun  *view.Run     `json:"last_run"`
	JobFile  string        `json:"job_file,omitempty"`
	// NewestFiles is, per exact-tracking file source, the files processed
	// most recently (newestFiles).
	NewestFiles map[string][]newestFile `json:"newest_files"`
	// Shown is, per source ctx, what the dashboard shows of its state, as
	// the source's kind shows it (bookmark.StateDetail.Pairs).
	Shown map[string][]bookmark.Pair `json:"shown"`
}

// planWorkers bounds how many plans GET /api/v1/jobs computes at once.
const planWorkers = 4

// jobs is GET /api/v1/jobs: every job with its head, last run and backlog.
func (s *server) jobs(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	names, err := s.jobNames(ctx)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	out := make([]jobSummary, len(names))
	files := make([]string, len(names))
	for i, name := range names {
		head, err := s.opts.Store.Head(ctx, name)
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		out[i] = jobSummary{Job: name, Version: head.Version, RunID: head.RunID}
		if files[i], err = s.lastRuns(ctx, &out[i]); err != nil {
			s.fail(w, r, 0, err)
			return
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, planWorkers)
	for i := range out {
		if files[i] == "" {
			out[i].BacklogError = "no job file known: the job's last run did not record one"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := s.plans.get(ctx, out[i].Job, files[i])
			if err != nil {
				out[i].BacklogError = s.clean(err.Error())
				return
			}
			out[i].Backlog = res
		}()
	}
	wg.Wait()
	writeJSON(w, http.StatusOK, map[string]any{"jobs": out})
}

// lastRuns fills j's last run, recent counts and last run that read
// something from its newest runs, and returns the last run's job file.
func (s *server) lastRuns(ctx context.Context, j *jobSummary) (string, error) {
	var file string
	n := 0
	for run, err := range store.EachRun(ctx, s.opts.Store, j.Job, 0, recentLimit) {
		if err != nil {
			return "", err
		}
		if n == 0 {
			v := view.RunOf(run)
			j.LastRun, j.Recent, file = &v, &recentRuns{}, run.JobFile
		}
		if n < recentLimit {
			j.Recent.Runs++
			switch run.Status {
			case store.StatusSucceeded:
				j.Recent.Succeeded++
			case store.StatusFailed:
				j.Recent.Failed++
			}
		}
		if j.LastReadRun == nil && run.Status == store.StatusSucceeded && readSomething(run) {
			v := view.RunOf(run)
			j.LastReadRun = &v
		}
		n++
		if n >= lastReadLimit || n >= recentLimit && j.LastReadRun != nil {
			break
		}
	}
	return file, nil
}

// readSomething says whether a run read rows or files from any source.
func readSomething(r store.Run) bool {
	for _, c := range r.Sources {
		if c.Rows > 0 || c.Files > 0 {
			return true
		}
	}
	return false
}

// jobNames lists the store's jobs, sorted.
func (s *server) jobNames(ctx context.Context) ([]string, error) {
	jl, ok := s.opts.Store.(store.JobLister)
	if !ok {
		return nil, withStatus(http.StatusServiceUnavailable, errors.New("this state store cannot list its jobs"))
	}
	names, err := jl.Jobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// knownJob returns the job's head, or a 404 error if the store holds
// nothing of the job (no version, no run).
func (s *server) knownJob(ctx context.Context, name string) (store.Head, []store.Run, error) {
	head, err := s.opts.Store.Head(ctx, name)
	if err != nil {
		return store.Head{}, nil, err
	}
	last, err := s.opts.Store.Runs(ctx, name, store.RunQuery{Limit: 1})
	if err != nil {
		return store.Head{}, nil, err
	}
	if head.Version == 0 && len(last) == 0 {
		return store.Head{}, nil, withStatus(http.StatusNotFound, fmt.Errorf("no job %q in this state store", name))
	}
	return head, last, nil
}

// job is GET /api/v1/jobs/{job}.
func (s *server) job(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.PathValue("job")
	head, last, states, err := s.jobState(ctx, name)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	d := jobDetail{Job: name, Version: head.Version, RunID: head.RunID, Bookmark: view.BookmarkOf(name, head, states)}
	if len(last) > 0 {
		v := view.RunOf(last[0])
		d.LastRun = &v
	}
	d.Shown = shownStates(states, last)
	if d.JobFile, err = s.jobFile(ctx, name); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if d.NewestFiles, err = s.newestFiles(ctx, name, states); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// jobFileLookback is how many recent runs jobFile looks at for one that
// recorded its job file.
const jobFileLookback = 20

// jobFile is the job file the newest run that recorded one was made from
// ("" if none of the recent runs did).
func (s *server) jobFile(ctx context.Context, name string) (string, error) {
	runs, err := s.opts.Store.Runs(ctx, name, store.RunQuery{Limit: jobFileLookback})
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		if r.JobFile != "" {
			return r.JobFile, nil
		}
	}
	return "", nil
}

// bookmark is GET /api/v1/jobs/{job}/bookmark: bookmark show --json.
func (s *server) bookmark(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.PathValue("job")
	head, _, states, err := s.jobState(ctx, name)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, view.BookmarkOf(name, head, states))
}

// jobState is a known job's head, its newest runs (knownJob) and the
// source states of its head.
func (s *server) jobState(ctx context.Context, name string) (store.Head, []store.Run, map[string]bookmark.SourceState, error) {
	head, last, err := s.knownJob(ctx, name)
	if err != nil {
		return head, nil, nil, err
	}
	states, err := s.opts.Store.SourceStates(ctx, name)
	return head, last, states, err
}

// shownStates is what the dashboard shows of each source state: its
// kind's pairs, given the source's count in the newest run (last[0]).
func shownStates(states map[string]bookmark.SourceState, last []store.Run) map[string][]bookmark.Pair {
	out := make(map[string][]bookmark.Pair, len(states))
	for k, s := range states {
		var counts bookmark.Counts
		if len(last) > 0 {
			if c, ok := last[0].Sources[k]; ok {
				counts = c
			}
		}
		out[k] = s.View().Pairs(s, counts)
	}
	return out
}
