package s3

import (
	"context"
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
	var h headObj
	etag, err := s.getJSON(ctx, headKey(job), &h)
	if errors.Is(err, errMissing) {
		return headObj{Job: job}, "", nil
	}
	if err != nil {
		return headObj{}, "", err
	}
	return h, etag, nil
}

// maxSwaps bounds the retries of one head update under contention.
const maxSwaps = 100

// updateHead changes the job's head with one compare-and-swap: it reads
// the head, writes the run-record changes the head has pending, lets
// change modify a copy (an error from change ends it, nothing written),
// and writes it back with If-Match (If-None-Match: * for a job without
// one). When another write came first (412, or the 409 S3 gives racing
// conditional writes) it reads the head again and starts over. When the
// answer is lost or an error leaves the outcome unknown, it reads the head
// and looks for its write's Op: found, the write applied. It returns the
// head as written.
func (s *Store) updateHead(ctx context.Context, job string, change func(h *headObj) error) (headObj, error) {
	if err := s.writable(); err != nil {
		return headObj{}, err
	}
	for attempt := 0; ; attempt++ {
		h, etag, err := s.readHead(ctx, job)
		if err != nil {
			return headObj{}, err
		}
		if err := s.applyPending(ctx, job, h.Pending); err != nil {
			return headObj{}, err
		}
		h.Pending = nil
		h.Job = job
		if err := change(&h); err != nil {
			if errors.Is(err, errNoChange) {
				return h, nil
			}
			return headObj{}, err
		}
		h.Op = nonce()
		_, err = s.putJSON(ctx, headKey(job), h, cond{ifNoneMatch: etag == "", ifMatch: etag})
		if err == nil {
			return h, nil
		}
		// Did the write apply? A lost answer retried by the SDK comes
		// back as a 412 against our own write.
		cur, _, rerr := s.readHead(ctx, job)
		if rerr == nil && cur.Op == h.Op {
			return h, nil
		}
		if !errors.Is(err, errPrecondition) {
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
