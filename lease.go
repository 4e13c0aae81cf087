package tidemark

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// DefaultLeaseTTL is how long a lease lives without renewal; a run renews
// it every third of that, so a dead holder's lease frees within one TTL.
const DefaultLeaseTTL = 60 * time.Second

// newRunID returns a run id that sorts by start time:
// 20261129T101500Z-3f9a2c.
func newRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// heldLease is a lease kept alive by a background renewer until release.
type heldLease struct {
	st     store.Store
	mu     sync.Mutex
	lease  store.Lease
	stop   chan struct{}
	done   chan struct{}
	cancel context.CancelCauseFunc
	ttl    time.Duration
}

// acquire takes the job's lease and renews it until release. When renewal
// finds the lease lost, cancel is called with store.ErrLeaseLost so the run
// stops before it can commit (the commit's fencing check would refuse it
// anyway).
//
// h0 is the holder (holderFor). A lease held by a process of this machine
// that is gone is taken over at once (sameMachine).
func acquire(ctx context.Context, st store.Store, jobName string, h0 store.Holder, ttl time.Duration, cancel context.CancelCauseFunc, log *slog.Logger) (*heldLease, error) {
	l, err := st.AcquireLease(ctx, jobName, h0, ttl)
	var held *store.LeaseHeldError
	if errors.As(err, &held) && sameMachine(held.Holder, h0.Host) && held.Holder.PID != os.Getpid() && !processAlive(held.Holder.PID) {
		// The holder was a process on this host that is gone (killed,
		// crashed): its lease would expire anyway; take it over now. Its
		// token is fenced out, so even a mistaken break cannot let it commit.
		log.Warn("taking over the lease of a dead run", "job", jobName, "holder", held.Holder.ID, "host", held.Holder.Host, "pid", held.Holder.PID)
		if err = st.BreakLease(ctx, jobName, held.Token); err == nil {
			l, err = st.AcquireLease(ctx, jobName, h0, ttl)
		}
	}
	if err != nil {
		return nil, err
	}
	h := &heldLease{st: st, lease: l, stop: make(chan struct{}), done: make(chan struct{}), cancel: cancel, ttl: ttl}
	go h.renew(ttl, log)
	return h, nil
}

func (h *heldLease) token() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease.Token
}

func (h *heldLease) renew(ttl time.Duration, log *slog.Logger) {
	defer close(h.done)
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			h.mu.Lock()
			l := h.lease
			h.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
			nl, err := h.st.RenewLease(ctx, l, ttl)
			cancel()
			if err != nil {
				log.Warn("renewing lease", "job", l.Job, "err", err)
				if h.cancel != nil && isLeaseLost(err) {
					h.cancel(fmt.Errorf("job %s: %w", l.Job, store.ErrLeaseLost))
					return
				}
				continue
			}
			h.mu.Lock()
			h.lease = nl
			h.mu.Unlock()
		}
	}
}

// confirm renews the lease now: store.ErrLeaseLost when another run has
// taken it.
func (h *heldLease) confirm(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	nl, err := h.st.RenewLease(ctx, h.lease, h.ttl)
	if err == nil {
		h.lease = nl
	}
	return err
}

// release stops renewal and frees the lease.
func (h *heldLease) release() {
	close(h.stop)
	<-h.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = h.st.ReleaseLease(ctx, h.lease)
}

// processAlive reports whether a process with pid exists on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return true // unknown: assume alive, let the lease expire
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
