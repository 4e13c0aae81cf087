package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/metrics"
)

// planCache computes a job's plan (its backlog) at most once per
// PlanEvery: a request within that time after the last plan gets its
// answer (or its error) again. Concurrent requests for one job share one
// computation.
type planCache struct {
	s  *server
	mu sync.Mutex
	m  map[string]*planEntry
}

// planEntry is one job's last plan; done is closed once res and err are
// set.
type planEntry struct {
	file string
	at   time.Time
	done chan struct{}
	res  *tidemark.PlanResult
	err  error
}

func newPlanCache(s *server) *planCache { return &planCache{s: s, m: map[string]*planEntry{}} }

// get returns the job's plan from job file file, computing it if the last
// one is older than PlanEvery or came from another file.
func (c *planCache) get(ctx context.Context, jobName, file string) (*tidemark.PlanResult, error) {
	now := c.s.opts.Now()
	c.mu.Lock()
	e, ok := c.m[jobName]
	if !ok || e.file != file || now.Sub(e.at) >= c.s.opts.PlanEvery {
		e = &planEntry{file: file, at: now, done: make(chan struct{})}
		c.m[jobName] = e
		c.mu.Unlock()
		// Detached from the request, so that a client going away does not
		// cache a cancellation for everyone; bounded by PlanTimeout.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.s.opts.PlanTimeout)
		e.res, e.err = c.s.computePlan(pctx, jobName, file)
		cancel()
		close(e.done)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-e.done:
		return e.res, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errNoJobFile answers a plan of a job whose job file is unknown or gone.
var errNoJobFile = errors.New("no job file")

// computePlan runs the planner on the job file, against this server's
// state store; it reads listings and the state, never data.
func (s *server) computePlan(ctx context.Context, jobName, file string) (*tidemark.PlanResult, error) {
	spec, err := job.Load(file)
	if err != nil {
		return nil, fmt.Errorf("%w: the job file %s the last run was made from cannot be read: %v", errNoJobFile, file, err)
	}
	res, err := tidemark.Plan(ctx, spec, tidemark.RunOptions{State: s.opts.StateLocation, JobName: jobName,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("planning job %s: gave up after %s", jobName, s.opts.PlanTimeout)
		}
		return nil, fmt.Errorf("planning job %s: %w", jobName, err)
	}
	return res, nil
}

// plan is GET /api/v1/jobs/{job}/plan: plan --json for the job, from the
// job file its last run recorded; 409 when there is none or it is gone.
func (s *server) plan(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.PathValue("job")
	if _, _, err := s.knownJob(ctx, name); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	file, err := s.jobFile(ctx, name)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if file == "" {
		s.fail(w, r, http.StatusConflict, fmt.Errorf("%w known for job %s: its recent runs did not record one (run it with this tidemark)", errNoJobFile, name))
		return
	}
	res, err := s.plans.get(ctx, name, file)
	if err != nil {
		s.fail(w, r, http.StatusConflict, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// forget drops the job's cached plan (its bookmark moved).
func (c *planCache) forget(jobName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, jobName)
}

// backlog is a job's backlog for the metrics: its plan, from the cache
// (nil when no job file is known).
func (s *server) backlog(ctx context.Context, jobName string) (metrics.Backlog, error) {
	file, err := s.jobFile(ctx, jobName)
	if err != nil || file == "" {
		return nil, err
	}
	res, err := s.plans.get(ctx, jobName, file)
	if err != nil {
		return nil, err
	}
	b := metrics.Backlog{}
	for name, p := range res.Sources {
		files, bytes, rows, oldest := p.Backlog()
		b[name] = metrics.BacklogCount{Files: files, Bytes: bytes, Rows: rows, Oldest: oldest}
	}
	return b, nil
}
