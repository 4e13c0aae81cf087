package crawler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// DefaultLeaseTTL is how long a crawl's lease lives without renewal; it is
// renewed every third of that.
const DefaultLeaseTTL = 60 * time.Second

// lease is the crawler's lease in the state store, renewed in the
// background until release: one crawl of a crawler at a time, and the
// crawl's writes fenced by its token.
type lease struct {
	st   store.Store
	mu   sync.Mutex
	l    store.Lease
	stop chan struct{}
	done chan struct{}
}

// takeLease takes the lease of job (a *store.LeaseHeldError if a live
// crawl holds it).
func takeLease(ctx context.Context, st store.Store, job string, h store.Holder, ttl time.Duration, log *slog.Logger) (*lease, error) {
	l, err := st.AcquireLease(ctx, job, h, ttl)
	if err != nil {
		return nil, err
	}
	hl := &lease{st: st, l: l, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(hl.done)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-hl.stop:
				return
			case <-t.C:
				rctx, cancel := context.WithTimeout(context.Background(), ttl/3)
				nl, err := st.RenewLease(rctx, hl.current(), ttl)
				cancel()
				if err != nil {
					log.Warn("renewing the crawler's lease", "job", job, "err", err)
					continue
				}
				hl.mu.Lock()
				hl.l = nl
				hl.mu.Unlock()
			}
		}
	}()
	return hl, nil
}

func (hl *lease) current() store.Lease {
	hl.mu.Lock()
	defer hl.mu.Unlock()
	return hl.l
}

func (hl *lease) token() int64 { return hl.current().Token }

// release stops the renewal and frees the lease.
func (hl *lease) release() {
	close(hl.stop)
	<-hl.done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hl.st.ReleaseLease(ctx, hl.current())
}

// newRunID returns a run id that sorts by start time.
func newRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// holder describes this process for the lease: host is its host id
// ("": hostname:pid, as for runs).
func holder(id, host string) store.Holder {
	if host == "" {
		name, err := os.Hostname()
		if err != nil || name == "" {
			name = "localhost"
		}
		host = name + ":" + strconv.Itoa(os.Getpid())
	}
	return store.Holder{ID: id, Host: host, PID: os.Getpid(), Started: time.Now().UTC()}
}
