package objcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// headObj is a job's head object, jobs/JOB/head.json: everything about a
// job that changes, in one object replaced only with If-Match, so that
// every change of it is one compare-and-swap. The lease lives in it with
// the bookmark's head, so a commit's swap checks the fencing token and the
// base version at once.
type headObj struct {
	Job string `json:"job"`
	// Op is a random id of the write that made this content. It makes
	// every write's bytes, hence its ETag, unique (S3's ETag is the MD5 of
	// the bytes: without it a write that puts back earlier bytes would
	// match a stale If-Match), and it tells a writer whose answer was lost
	// whether its write applied.
	Op string `json:"op"`

	// LastToken is the last fencing token handed out; it outlives leases.
	LastToken int64     `json:"last_token"`
	Lease     *leaseObj `json:"lease,omitempty"` // nil: free

	Version    int64     `json:"version"`
	RunID      string    `json:"run_id"`
	UpdatedAt  time.Time `json:"updated_at"`
	VersionKey string    `json:"version_key,omitempty"` // the head version's object; "" for version 0

	Seq    int64 `json:"seq"`    // the last run Seq handed out
	Failed int   `json:"failed"` // failed runs since the last succeeded one (Attempt - 1)
	// SucceededSeq is the Seq of the newest succeeded run (0: none, or a
	// head of an older tidemark). A run recorded running below it is dead
	// (see readRun).
	SucceededSeq int64 `json:"succeeded_seq,omitempty"`
	// Unpublished are the committed runs whose outputs may not all be
	// published, oldest first.
	Unpublished []string `json:"unpublished,omitempty"`
	// Pending are run-record changes that the swap that made this head
	// decided and that may not be in the run records yet; the next write
	// of the head writes them first. Readers apply them.
	Pending []patch `json:"pending,omitempty"`
}

// leaseObj is a held lease.
type leaseObj struct {
	Token   int64        `json:"token"`
	Holder  store.Holder `json:"holder"`
	Expires time.Time    `json:"expires"` // on the server's clock
}

// patch is one decided change of a run record.
type patch struct {
	RunID string `json:"run_id"`
	// Commit is the key of the run's commit object: its final record.
	Commit string `json:"commit,omitempty"`
	// Undone marks the run undone (a reset or rewind).
	Undone bool `json:"undone,omitempty"`
}

// jobKey is the folder of a job's objects.
func jobKey(job string) string { return "jobs/" + esc(job) + "/" }

// headKey is a job's head object.
func headKey(job string) string { return jobKey(job) + "head.json" }

// readHead returns the job's head and its ETag ("" and an empty head for
// a job with none).
func (s *Store) readHead(ctx context.Context, job string) (headObj, string, error) {
	o, err := s.b.Get(ctx, headKey(job))
	if errors.Is(err, ErrMissing) {
		s.remember(job, nil, "")
		return headObj{Job: job}, "", nil
	}
	if err != nil {
		return headObj{}, "", err
	}
	var h headObj
	if err := json.Unmarshal(o.Body, &h); err != nil {
		return headObj{}, "", fmt.Errorf("decoding %s: %w", s.url(headKey(job)), err)
	}
	s.remember(job, o.Body, o.ETag)
	return h, o.ETag, nil
}

// remember caches a job's head as read or written (body nil: none).
func (s *Store) remember(job string, body []byte, etag string) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if len(s.heads) > 1024 {
		clear(s.heads)
	}
	s.heads[job] = cachedHead{body: body, etag: etag}
}

// forget drops a job's cached head.
func (s *Store) forget(job string) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	delete(s.heads, job)
}

// recalled returns the cached head of a job, a copy.
func (s *Store) recalled(job string) (headObj, string, bool) {
	s.cacheMu.Lock()
	c, ok := s.heads[job]
	s.cacheMu.Unlock()
	if !ok {
		return headObj{}, "", false
	}
	if c.body == nil {
		return headObj{Job: job}, "", true
	}
	var h headObj
	if json.Unmarshal(c.body, &h) != nil {
		return headObj{}, "", false
	}
	return h, c.etag, true
}

// maxSwaps bounds the retries of one head update under contention.
const maxSwaps = 100

// updateHead changes the job's head with one compare-and-swap: it reads
// the head (its first guess is the head this process last read or wrote,
// checked by the swap itself; a decision not to write, or an error, made
// on the guess is made again on a fresh read), writes the run-record changes the head has pending, lets
// change modify a copy (an error from change ends it, nothing written),
// and writes it back with If-Match (If-None-Match: * for a job without
// one). When another write came first (ErrPrecondition: on S3 a 412, or
// the 409 it gives racing conditional writes) it reads the head again and
// starts over. When the
// answer is lost or an error leaves the outcome unknown, it reads the head
// and looks for its write's Op: found, the write applied. It returns the
// head as written.
func (s *Store) updateHead(ctx context.Context, job string, change func(h *headObj) error) (headObj, error) {
	if err := s.writable(); err != nil {
		return headObj{}, err
	}
	for attempt := 0; ; attempt++ {
		h, etag, guess := s.recalled(job)
		if attempt > 0 || !guess {
			var err error
			if h, etag, err = s.readHead(ctx, job); err != nil {
				return headObj{}, err
			}
			guess = false
		}
		if err := s.applyPending(ctx, job, h.Pending); err != nil {
			return headObj{}, err
		}
		h.Pending = nil
		h.Job = job
		if err := change(&h); err != nil {
			if guess {
				continue // decide again on a fresh read
			}
			if errors.Is(err, errNoChange) {
				return h, nil
			}
			return headObj{}, err
		}
		h.Op = nonce()
		body, err := json.Marshal(h)
		if err != nil {
			return headObj{}, fmt.Errorf("encoding %s: %w", s.url(headKey(job)), err)
		}
		newTag, err := s.b.Put(ctx, headKey(job), body, Cond{IfNoneMatch: etag == "", IfMatch: etag})
		if err == nil {
			s.remember(job, body, newTag)
			return h, nil
		}
		s.forget(job)
		// Did the write apply? A lost answer retried by the SDK comes
		// back as a 412 against our own write.
		cur, _, rerr := s.readHead(ctx, job)
		if rerr == nil && cur.Op == h.Op {
			return h, nil
		}
		if !errors.Is(err, ErrPrecondition) {
			if rerr != nil {
				return headObj{}, fmt.Errorf("%w (and reading it back to see whether the write applied: %v)", err, rerr)
			}
			return headObj{}, err
		}
		if attempt >= maxSwaps {
			return headObj{}, fmt.Errorf("updating %s: %d writers in a row came first: %w", s.url(headKey(job)), attempt+1, err)
		}
		time.Sleep(time.Duration(rand.IntN(1+min(attempt, 10)*5)) * time.Millisecond)
	}
}

// checkToken returns store.ErrLeaseLost unless token is the token of the
// head's lease. Expiry alone does not fence a run out: only another
// acquisition or a release does.
func (h *headObj) checkToken(token int64) error {
	if h.Lease == nil {
		return fmt.Errorf("token %d: job %q has no lease: %w", token, h.Job, store.ErrLeaseLost)
	}
	if h.Lease.Token != token {
		return fmt.Errorf("token %d is stale, %s holds token %d: %w", token, h.Lease.Holder.ID, h.Lease.Token, store.ErrLeaseLost)
	}
	return nil
}

// head returns the store.Head the object holds.
func (h *headObj) head() store.Head {
	return store.Head{Job: h.Job, Version: h.Version, RunID: h.RunID, UpdatedAt: h.UpdatedAt}
}
