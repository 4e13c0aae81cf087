package objcore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// runObj is a run record, jobs/JOB/runs/RUN.json: the run with what its
// commit recorded. Created with If-None-Match: * by BeginRun (or Commit),
// replaced only with If-Match.
type runObj struct {
	Run     store.Run           `json:"run"`
	Outputs []store.Output      `json:"outputs,omitempty"`
	Actions []store.SinkAction  `json:"actions,omitempty"`
	Ranges  []store.RangeRecord `json:"ranges,omitempty"`
	// Inputs are the segments of the files the run read, one per source
	// ctx: its input manifest (the commit's own segments, which later
	// compactions merge into bigger ones but never change).
	Inputs []segRef `json:"inputs,omitempty"`
	// CommitKey is the commit object the record was written from (empty
	// until the run committed): what decides a commit's catalog change.
	CommitKey string `json:"commit_key,omitempty"`
	// Token is the fencing token of the lease the run was begun under (0
	// in records of an older tidemark and in imported ones).
	Token int64 `json:"token,omitempty"`
}

// runKey is a run's record.
func runKey(job, runID string) string { return jobKey(job) + "runs/" + esc(runID) + ".json" }

// seqPrefix is the folder of a job's run index: one empty object per run,
// SEQ-RUN, SEQ inverted so that listing gives the newest first.
func seqPrefix(job string) string { return jobKey(job) + "seqs/" }

// inv writes n so that byte order is descending n.
func inv(n int64) string { return fmt.Sprintf("%019d", math.MaxInt64-n) }

// uninv undoes inv.
func uninv(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	return math.MaxInt64 - n, err
}

// seqKey is one run's index entry.
func seqKey(job string, seq int64, runID string) string {
	return seqPrefix(job) + inv(seq) + "-" + esc(runID)
}

// diedUnseen reports whether r is recorded running although it is dead
// and out of reach of the runner's search for dead runs: its Seq is below
// the newest succeeded run's, and the lease it was begun under is gone.
// The succeeded run's holder took the lease from it and, before it began,
// recorded as failed every run then recorded running; this one's record
// was not there yet. BeginRun's head swap and the record are two writes,
// and a host stopped between them that could not take its late record
// back (killed, or cut off from the store) leaves it there.
func (r *runObj) diedUnseen(h *headObj) bool {
	if r.Run.Status != store.StatusRunning || r.Run.Seq >= h.SucceededSeq || r.Token == 0 {
		return false
	}
	return h.Lease == nil || h.Lease.Token != r.Token
}

// diedUnseenError is the error a run that died unseen reads with.
const diedUnseenError = "the run died before it committed (killed, or stopped or cut off from the state store while " +
	"another host took the job over); nothing of it was published"

// readRun reads a run record; store.ErrNotFound if there is none. It
// applies what h has pending for the run, and reads a dead run recorded
// running as failed (see diedUnseen); h may be nil: the record as
// stored.
func (s *Store) readRun(ctx context.Context, job, runID string, h *headObj) (runObj, string, error) {
	var r runObj
	etag, err := s.getJSON(ctx, runKey(job, runID), &r)
	if errors.Is(err, ErrMissing) {
		return runObj{}, "", fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
	}
	if err != nil {
		return runObj{}, "", err
	}
	if h != nil && r.Run.Seq > h.Seq {
		// Written by an import whose head is not there (yet, or ever).
		return runObj{}, "", fmt.Errorf("run %s of job %q: %w", runID, job, store.ErrNotFound)
	}
	if h != nil {
		for _, p := range h.Pending {
			if p.RunID != runID {
				continue
			}
			if p.Commit != "" && r.Run.Status == store.StatusRunning {
				var c runObj
				if _, err := s.getJSON(ctx, p.Commit, &c); err != nil {
					return runObj{}, "", err
				}
				r = c
			}
			if p.Undone {
				r.Run.Undone = true
			}
		}
		if r.diedUnseen(h) {
			r.Run.Status, r.Run.Error = store.StatusFailed, diedUnseenError
		}
	}
	return r, etag, nil
}

// applyPending writes the run-record changes a head has pending (see
// headObj.Pending), 16 records at a time (a rewind marks every run it
// undoes: one at a time, each a read and a write, thousands of runs took
// minutes on S3), the changes of one run in order. Each is idempotent.
func (s *Store) applyPending(ctx context.Context, job string, ps []patch) error {
	byRun := map[string][]patch{}
	var runs []string
	for _, p := range ps {
		if byRun[p.RunID] == nil {
			runs = append(runs, p.RunID)
		}
		byRun[p.RunID] = append(byRun[p.RunID], p)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, id := range runs {
		g.Go(func() error {
			for _, p := range byRun[id] {
				if err := s.applyPatch(gctx, job, p); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// applyPatch writes one pending change to its run record, unless this
// process wrote it already.
func (s *Store) applyPatch(ctx context.Context, job string, p patch) error {
	s.cacheMu.Lock()
	done := s.applied[p]
	s.cacheMu.Unlock()
	if done {
		return nil
	}
	for {
		r, etag, err := s.readRun(ctx, job, p.RunID, nil)
		missing := errors.Is(err, store.ErrNotFound)
		if err != nil && !missing {
			return fmt.Errorf("finishing the last change of job %q: %w", job, err)
		}
		changed := false
		if p.Commit != "" && (missing || r.Run.Status == store.StatusRunning) {
			if _, err := s.getJSON(ctx, p.Commit, &r); err != nil {
				return fmt.Errorf("finishing the commit of run %s of job %q: %w", p.RunID, job, err)
			}
			changed = true
		}
		if p.Undone && !r.Run.Undone && !missing {
			r.Run.Undone, changed = true, true
		}
		if !changed {
			s.markApplied(p)
			return nil
		}
		_, err = s.putJSON(ctx, runKey(job, p.RunID), r, Cond{IfNoneMatch: etag == "", IfMatch: etag})
		if err == nil {
			s.markApplied(p)
			return nil
		}
		if !errors.Is(err, ErrPrecondition) {
			return fmt.Errorf("finishing the last change of job %q: %w", job, err)
		}
	}
}

// markApplied remembers that a pending change is in its run record.
func (s *Store) markApplied(p patch) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if len(s.applied) > 4096 {
		clear(s.applied)
	}
	s.applied[p] = true
}

// BeginRun records r as running with the next Seq of its job and its
// Attempt, under the job's lease: the head's swap hands out the Seq and
// checks the token; the run record is then created with If-None-Match: *
// and indexed. A run id may be begun once.
func (s *Store) BeginRun(ctx context.Context, token int64, r store.Run) (store.Run, error) {
	r, err := s.beginRun(ctx, token, r)
	if err != nil {
		return store.Run{}, fmt.Errorf("beginning run %s of job %q in %s: %w", r.RunID, r.Job, s.root, err)
	}
	return r, nil
}

func (s *Store) beginRun(ctx context.Context, token int64, r store.Run) (store.Run, error) {
	if r.Job == "" || r.RunID == "" {
		return r, fmt.Errorf("run needs a job and a run id")
	}
	if _, err := s.b.Stat(ctx, runKey(r.Job, r.RunID)); err == nil {
		return r, errRunExists
	} else if !errors.Is(err, ErrMissing) {
		return r, err
	}
	var now time.Time
	h, err := s.updateHead(ctx, r.Job, func(h *headObj) error {
		if err := h.checkToken(token); err != nil {
			return err
		}
		h.Seq++
		return nil
	})
	if err != nil {
		return r, err
	}
	if now, err = s.Now(ctx); err != nil {
		return r, err
	}
	if r.Mode == "" {
		r.Mode = bookmark.ModeEnable
	}
	if r.StartedAt.IsZero() {
		r.StartedAt = now
	}
	r.StartedAt = utc(r.StartedAt)
	r.Status = store.StatusRunning
	r.FinishedAt, r.Version, r.Undone, r.Purged, r.Error = time.Time{}, 0, false, false, ""
	r.Seq, r.Attempt = h.Seq, h.Failed+1
	r.Sources, r.Sinks = nilIfEmpty(r.Sources), nilIfEmpty(r.Sinks)
	err = s.createRun(ctx, runObj{Run: r, Token: token})
	if errors.Is(err, errRunExists) {
		return r, err
	}
	// The swap handed out the Seq under the lease, but the record came
	// after it: if the lease moved on meanwhile (this host stalled), a new
	// holder may have looked for dead runs before the record was there.
	// Then the run goes again, as if never begun; else any later holder
	// sees it. So too when the record's writes failed or were cut short
	// (the lease's loss cancels ctx): they may have reached the server.
	lost, herr := s.takeBack(ctx, r, token)
	switch {
	case lost:
		return r, fmt.Errorf("the lease was lost while the run was being recorded: %w", store.ErrLeaseLost)
	case err != nil:
		return r, err
	case herr != nil:
		return r, herr
	}
	return r, nil
}

// takeBack deletes the run record and index entry of r, begun under
// token, if the job's lease has moved on (lost reports whether it has),
// even when ctx was canceled. What it cannot delete reads as failed once
// a later run succeeded (see diedUnseen).
func (s *Store) takeBack(ctx context.Context, r store.Run, token int64) (lost bool, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cur, _, err := s.readHead(ctx, r.Job)
	if err != nil {
		return false, err
	}
	if cur.Lease != nil && cur.Lease.Token == token {
		return false, nil
	}
	_ = s.b.Delete(ctx, seqKey(r.Job, r.Seq, r.RunID))
	_ = s.b.Delete(ctx, runKey(r.Job, r.RunID))
	return true, nil
}

// errRunExists: a run id is begun once.
var errRunExists = errors.New("run already exists")

// createRun creates a run record and its index entry.
func (s *Store) createRun(ctx context.Context, rec runObj) error {
	r := rec.Run
	if err := s.createJSON(ctx, runKey(r.Job, r.RunID), rec); err != nil {
		if errors.Is(err, ErrPrecondition) {
			return errRunExists
		}
		return err
	}
	if _, err := s.b.Put(ctx, seqKey(r.Job, r.Seq, r.RunID), nil, Cond{}); err != nil {
		return err
	}
	return nil
}

// nilIfEmpty returns nil for an empty count map, as every backend returns
// it.
func nilIfEmpty(m map[string]store.Count) map[string]store.Count {
	if len(m) == 0 {
		return nil
	}
	return m
}

// FailRun records a running run's failure under the job's lease: the
// head's swap checks the token and counts the failure (for Attempt), then
// the run record is replaced with If-Match.
func (s *Store) FailRun(ctx context.Context, job string, token int64, runID string, finished time.Time, summary store.Run, msg string) error {
	if err := s.failRun(ctx, job, token, runID, finished, summary, msg); err != nil {
		return fmt.Errorf("recording failure of run %s of job %q in %s: %w", runID, job, s.root, err)
	}
	return nil
}

func (s *Store) failRun(ctx context.Context, job string, token int64, runID string, finished time.Time, summary store.Run, msg string) error {
	h, err := s.updateHead(ctx, job, func(h *headObj) error {
		if err := h.checkToken(token); err != nil {
			return err
		}
		r, _, err := s.readRun(ctx, job, runID, h)
		if err != nil {
			return err
		}
		if err := store.CheckRunning(r.Run); err != nil {
			return err
		}
		h.Failed++
		return nil
	})
	if err != nil {
		return err
	}
	_ = h
	if finished.IsZero() {
		if finished, err = s.Now(ctx); err != nil {
			return err
		}
	}
	return s.changeRun(ctx, job, runID, func(r *runObj) error {
		r.Run.Status, r.Run.FinishedAt, r.Run.Error = store.StatusFailed, utc(finished), msg
		r.Run.Sources, r.Run.Sinks = nilIfEmpty(summary.Sources), nilIfEmpty(summary.Sinks)
		return nil
	})
}

// changeRun replaces a run record with If-Match, reading it again when
// another write came first.
func (s *Store) changeRun(ctx context.Context, job, runID string, change func(r *runObj) error) error {
	for attempt := 0; ; attempt++ {
		r, etag, err := s.readRun(ctx, job, runID, nil)
		if err != nil {
			return err
		}
		if err := change(&r); err != nil {
			return err
		}
		_, err = s.putJSON(ctx, runKey(job, runID), r, Cond{IfMatch: etag})
		if err == nil || !errors.Is(err, ErrPrecondition) || attempt >= maxSwaps {
			return err
		}
	}
}

// Runs returns the job's runs newest first, bounded by q: it lists the
// run index from below q.BeforeSeq and reads the records, 16 at a time.
func (s *Store) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	recs, err := s.runRecords(ctx, job, q)
	if err != nil {
		return nil, fmt.Errorf("listing runs of job %q in %s: %w", job, s.root, err)
	}
	runs := make([]store.Run, len(recs))
	for i, r := range recs {
		runs[i] = r.Run
	}
	return runs, nil
}

// runRecords reads the job's run records newest first, bounded by q, with
// what the head has pending applied.
func (s *Store) runRecords(ctx context.Context, job string, q store.RunQuery) ([]runObj, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return nil, err
	}
	after := ""
	if q.BeforeSeq > 0 {
		after = seqPrefix(job) + inv(q.BeforeSeq) + "." // past every SEQ-RUN of BeforeSeq
	}
	var runs []runObj
	for {
		// One page of index entries, then their records.
		type entry struct {
			seq int64
			id  string
		}
		var page []entry
		want := 100
		if q.Limit > 0 {
			want = min(want, q.Limit-len(runs))
		}
		err := s.b.List(ctx, seqPrefix(job), after, func(e Entry) (bool, error) {
			key := e.Key
			after = key
			name := strings.TrimPrefix(key, seqPrefix(job))
			n, id, ok := strings.Cut(name, "-")
			if !ok {
				return true, nil
			}
			seq, err := uninv(n)
			if err != nil {
				return true, nil
			}
			if id, err = unesc(id); err != nil {
				return true, nil
			}
			page = append(page, entry{seq, id})
			return len(page) < want, nil
		})
		if err != nil {
			return nil, err
		}
		recs := make([]*runObj, len(page))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(16)
		for i, e := range page {
			g.Go(func() error {
				r, _, err := s.readRun(gctx, job, e.id, &h)
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
				if r.Run.Seq == e.seq { // else an entry of a lost race for the id
					recs[i] = &r
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r != nil {
				runs = append(runs, *r)
			}
		}
		if len(page) < want || (q.Limit > 0 && len(runs) >= q.Limit) {
			return runs, nil
		}
	}
}

// Run returns one run; store.ErrNotFound if the job has no such run.
func (s *Store) Run(ctx context.Context, job, runID string) (store.Run, error) {
	h, _, err := s.readHead(ctx, job)
	if err == nil {
		var r runObj
		r, _, err = s.readRun(ctx, job, runID, &h)
		if err == nil {
			return r.Run, nil
		}
	}
	return store.Run{}, fmt.Errorf("reading run %s of job %q in %s: %w", runID, job, s.root, err)
}

// MarkPurged records that the run's published output was deleted, under
// the job's lease (the token is checked on the head just before the run
// record is replaced). Idempotent.
func (s *Store) MarkPurged(ctx context.Context, job string, token int64, runID string) error {
	err := s.fencedRunChange(ctx, job, token, runID, func(r *runObj) { r.Run.Purged = true })
	if err != nil {
		return fmt.Errorf("marking run %s of job %q purged in %s: %w", runID, job, s.root, err)
	}
	return nil
}

// fencedRunChange changes a run record under the job's lease: it reads
// the head, checks the token and writes what the head has pending, then
// replaces the record with If-Match.
func (s *Store) fencedRunChange(ctx context.Context, job string, token int64, runID string, change func(r *runObj)) error {
	if err := s.writable(); err != nil {
		return err
	}
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return err
	}
	if err := h.checkToken(token); err != nil {
		return err
	}
	if err := s.applyPending(ctx, job, h.Pending); err != nil {
		return err
	}
	return s.changeRun(ctx, job, runID, func(r *runObj) error { change(r); return nil })
}
