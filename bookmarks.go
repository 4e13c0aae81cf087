package tidemark

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"
)

// Bookmarks gives a Go program tidemark's bookmarks without its runner:
// ask which files of a source are new, process them your own way, then
// Commit. It holds the job's lease from OpenBookmarks to Close, so no other
// run of the job interleaves; until Commit nothing is recorded, and a
// program that dies before Commit simply sees the same files next time.
//
// It is a run as Run and a Session are (lifecycle.go): its run begins
// with the lease, dead runs marked failed and earlier runs recovered;
// each source asked for is checked with Run's checks in Run's order (a
// changed definition is a usage error, exit 2); the run is recorded at its
// first write, Commit, so a program that opens and closes without
// committing leaves no run; and its OpenLineage events (OPENLINEAGE_URL)
// are sent as Run sends a job's.
type Bookmarks struct {
	s     *Session
	plans []*files.Plan
	// failure is NewFiles' last error that was no refusal: a Close that
	// ends the run on it records it as failed, as Run records a run
	// whose source could not be planned.
	failure error
}

// errClosed is the reason a Bookmarks run closed without a commit ends
// with; it is no run.
var errClosed = errors.New("closed without commit")

// OpenBookmarks opens the state store at location (see StateLocation for
// the default) and takes the job's lease; a running job yields an error
// wrapping store.ErrLeaseHeld.
func OpenBookmarks(ctx context.Context, location, jobName string) (*Bookmarks, error) {
	if !job.ValidName(jobName) {
		return nil, fmt.Errorf("%w: job name %q: %s", ErrUsage, jobName, job.NameRule)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	s, err := BeginSession(ctx, SessionOptions{Job: jobName, Dir: wd, State: location, Mode: bookmark.ModeEnable})
	if err != nil {
		return nil, err
	}
	return &Bookmarks{s: s}, nil
}

// NewFiles returns the files of src that are new (or modified, per
// src.OnModified) since the bookmark, oldest first, within src's bounds.
// src.Config is its *files.Config (package source/files), whose Path is a
// URL or an absolute or working-directory-relative path.
// Call it at most once per ctx before Commit.
func (b *Bookmarks) NewFiles(ctx context.Context, src job.Source) ([]bookmark.File, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil, errors.New("bookmarks already committed or closed")
	}
	if _, ok := src.Config.(*files.Config); !ok {
		return nil, fmt.Errorf("%w: source %s: the Bookmarks API reads file sources (a *files.Config), not %T", ErrUsage, src.Ctx, src.Config)
	}
	for _, q := range b.plans {
		if q.Ctx == src.Ctx {
			return nil, fmt.Errorf("source %s: NewFiles called twice before Commit", src.Ctx)
		}
	}
	ss, err := s.source(ctx, src, false, false)
	if err != nil {
		if !s.refused {
			b.failure = err
		}
		return nil, err
	}
	p := ss.plan.(*files.Plan)
	b.plans = append(b.plans, p)
	return p.Take, nil
}

// Commit records every file that NewFiles returned as processed, in one
// transaction with a run record, and releases the lease. rows, if given,
// is stored as the run's row count per source ctx.
func (b *Bookmarks) Commit(ctx context.Context, rows map[string]int64) (store.Head, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return store.Head{}, errors.New("bookmarks already committed or closed")
	}
	reports := map[string]SourceReport{}
	for name, n := range rows {
		reports[name] = SourceReport{Rows: n}
	}
	err := s.commit(ctx, reports)
	var head store.Head
	if err == nil {
		head = b.head(ctx)
	}
	if _, err := s.end(ctx, err); err != nil {
		return head, fmt.Errorf("committing bookmarks of job %s: %w", s.r.job, err)
	}
	return head, nil
}

// head is the job's bookmark head once the run committed, read back
// (under the lease it is the commit's); what the run record says if it
// cannot be read.
func (b *Bookmarks) head(ctx context.Context) store.Head {
	r := b.s.r
	head, err := r.st.Head(ctx, r.job)
	if err != nil {
		return store.Head{Job: r.job, Version: r.rec.Version, RunID: r.rec.RunID, UpdatedAt: r.rec.FinishedAt}
	}
	return head
}

// Close releases the lease without committing: the same files are new
// next time, and no run is recorded unless NewFiles failed otherwise than
// refused (then the run is recorded as failed with that error). Safe
// after Commit.
func (b *Bookmarks) Close() error {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	err := b.failure
	if err == nil {
		// Nothing written: ended as a refused run is, no run.
		s.refused, err = true, errClosed
	}
	_, _ = s.end(context.Background(), err)
	return nil
}
