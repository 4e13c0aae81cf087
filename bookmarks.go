package tidemark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/source/files"
	"github.com/tidemark-etl/tidemark/store"
)

// Bookmarks gives a Go program tidemark's bookmarks without its runner:
// ask which files of a source are new, process them your own way, then
// Commit. It holds the job's lease from OpenBookmarks to Close, so no other
// run of the job interleaves; until Commit nothing is recorded, and a
// program that dies before Commit simply sees the same files next time.
type Bookmarks struct {
	st     store.Store
	job    string
	lease  *heldLease
	head   store.Head
	states map[string]bookmark.SourceState
	rec    store.Run
	plans  []*files.Plan
	done   bool
}

// OpenBookmarks opens the state store at location (see StateLocation for
// the default) and takes the job's lease; a running job yields an error
// wrapping store.ErrLeaseHeld.
func OpenBookmarks(ctx context.Context, location, jobName string) (*Bookmarks, error) {
	if !job.ValidName(jobName) {
		return nil, fmt.Errorf("%w: job name %q: %s", ErrUsage, jobName, job.NameRule)
	}
	st, err := OpenState(ctx, location)
	if err != nil {
		return nil, err
	}
	started := time.Now().UTC()
	b := &Bookmarks{st: st, job: jobName}
	// The run begins as Run and a Session begin theirs (lifecycle.go): its
	// sources are asked for later, each checked then.
	r := &runner{spec: &job.Spec{Job: jobName}, st: st, job: jobName, log: slog.New(slog.DiscardHandler),
		opts: RunOptions{Mode: bookmark.ModeEnable, HostID: DefaultHostID(), LeaseTTL: DefaultLeaseTTL, Logger: slog.New(slog.DiscardHandler)}}
	r.spec.ApplyDefaults()
	r.rec = store.Run{Job: jobName, RunID: newRunID(started), Mode: bookmark.ModeEnable, Status: store.StatusRunning, StartedAt: started,
		Host: r.opts.HostID}
	err = r.begin(ctx, started, nil, nil)
	b.lease, b.rec = r.lease, r.rec
	if err != nil {
		b.Close()
		return nil, err
	}
	if err = r.recover(ctx); err == nil {
		if b.head, err = st.Head(ctx, jobName); err == nil {
			b.states, err = st.SourceStates(ctx, jobName)
		}
	}
	if err != nil {
		_ = st.FailRun(context.WithoutCancel(ctx), jobName, b.lease.token(), b.rec.RunID, time.Now().UTC(), b.rec, secret.Redact(err.Error()))
		b.done = true
		b.release()
		return nil, err
	}
	return b, nil
}

// NewFiles returns the files of src that are new (or modified, per
// src.OnModified) since the bookmark, oldest first, within src's bounds.
// src.Config is its *files.Config (package source/files), whose Path is a
// URL or an absolute or working-directory-relative path.
// Call it at most once per ctx before Commit.
func (b *Bookmarks) NewFiles(ctx context.Context, src job.Source) ([]bookmark.File, error) {
	if b.done {
		return nil, errors.New("bookmarks already committed or closed")
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	spec := &job.Spec{Job: b.job, Dir: wd, Sources: []job.Source{src}}
	spec.ApplyDefaults()
	fs, err := files.Open(ctx, spec, spec.Sources[0])
	if err != nil {
		return nil, err
	}
	prev, has := b.states[src.Ctx]
	p, err := fs.PlanFiles(ctx, source.Request{Job: b.job, Mode: bookmark.ModeEnable, State: b.st, Catalog: b.st, Prev: prev, HasPrev: has,
		Now: time.Now()})
	if err != nil {
		return nil, err
	}
	for _, q := range b.plans {
		if q.Ctx == p.Ctx {
			return nil, fmt.Errorf("source %s: NewFiles called twice before Commit", p.Ctx)
		}
	}
	b.plans = append(b.plans, p)
	return p.Take, nil
}

// Commit records every file that NewFiles returned as processed, in one
// transaction with a run record, and releases the lease. rows, if given,
// is stored as the run's row count per source ctx.
func (b *Bookmarks) Commit(ctx context.Context, rows map[string]int64) (store.Head, error) {
	if b.done {
		return store.Head{}, errors.New("bookmarks already committed or closed")
	}
	c := store.Commit{Job: b.job, Token: b.lease.token(), BaseVersion: b.head.Version, Sources: map[string]bookmark.SourceState{}}
	for k, v := range b.states {
		c.Sources[k] = v
	}
	for _, p := range b.plans {
		b.rec.Sources[p.Ctx] = store.Count{Files: int64(len(p.Take)), Bytes: p.Bytes(), Rows: rows[p.Ctx]}
		if len(p.Take) == 0 {
			continue
		}
		c.Advance = true
		c.Sources[p.Ctx] = p.NextState(nil)
		for _, f := range p.Take {
			c.Added = append(c.Added, store.FileRecord{Ctx: p.Ctx, File: f})
		}
		for _, f := range p.Superseded {
			c.Superseded = append(c.Superseded, store.FileRecord{Ctx: p.Ctx, File: f})
		}
	}
	if !c.Advance {
		c.Sources = nil
	}
	b.rec.Status, b.rec.FinishedAt = store.StatusSucceeded, time.Now().UTC()
	c.Run = b.rec
	head, err := b.st.Commit(ctx, c)
	if err != nil {
		return head, fmt.Errorf("committing bookmarks of job %s: %w", b.job, err)
	}
	b.done = true
	b.release()
	return head, nil
}

// Close releases the lease without committing: the run is recorded as
// failed and the same files are new next time. Safe after Commit.
func (b *Bookmarks) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	if b.rec.Seq > 0 && b.lease != nil {
		_ = b.st.FailRun(context.Background(), b.job, b.lease.token(), b.rec.RunID, time.Now().UTC(), b.rec, "closed without commit")
	}
	b.release()
	return nil
}

func (b *Bookmarks) release() {
	if b.lease != nil {
		b.lease.release()
	}
	b.st.Close()
}
