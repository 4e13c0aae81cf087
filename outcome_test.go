package tidemark

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// commitFault says what a faultyStore does with a commit.
type commitFault int

const (
	commitFine         commitFault = iota
	commitThenError                // apply the commit, then lose the answer
	errorBeforeApply               // drop the connection before the commit reaches the store
	conflictAfterRetry             // apply it, then a retry inside the store finds the version moved
	blindAfterError                // lose the answer, then fail every read of the run too
)

// faultyStore is a memory store in front of which commits go wrong, as a
// dropped connection or a lost answer would have them.
type faultyStore struct {
	*memory.Store
	mu    sync.Mutex
	fault commitFault
	blind bool // reads of runs fail
}

func (s *faultyStore) Commit(ctx context.Context, c store.Commit) (store.Head, error) {
	s.mu.Lock()
	f := s.fault
	s.mu.Unlock()
	switch f {
	case errorBeforeApply:
		return store.Head{}, errors.New("connection reset by peer")
	case commitThenError, blindAfterError:
		if _, err := s.Store.Commit(ctx, c); err != nil {
			return store.Head{}, err
		}
		s.mu.Lock()
		s.blind = f == blindAfterError
		s.mu.Unlock()
		return store.Head{}, errors.New("reading the commit's answer: unexpected EOF")
	case conflictAfterRetry:
		if _, err := s.Store.Commit(ctx, c); err != nil {
			return store.Head{}, err
		}
		_, err := s.Store.Commit(ctx, c) // the retry sees its own first attempt
		return store.Head{}, err
	}
	return s.Store.Commit(ctx, c)
}

func (s *faultyStore) Run(ctx context.Context, job, runID string) (store.Run, error) {
	s.mu.Lock()
	blind := s.blind
	s.mu.Unlock()
	if blind {
		return store.Run{}, errors.New("dial tcp: connection refused")
	}
	return s.Store.Run(ctx, job, runID)
}

func (s *faultyStore) FailRun(ctx context.Context, job string, token int64, runID string, finished time.Time, summary store.Run, msg string) error {
	s.mu.Lock()
	blind := s.blind
	s.mu.Unlock()
	if blind {
		return errors.New("dial tcp: connection refused")
	}
	return s.Store.FailRun(ctx, job, token, runID, finished, summary, msg)
}

func (s *faultyStore) Close() error { return nil }

func (s *faultyStore) set(f commitFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.blind = f, false
}

var (
	faultyMu     sync.Mutex
	faultyStores = map[string]*faultyStore{}
)

func init() {
	store.Register("commitfault", func(_ context.Context, location string) (store.Store, error) {
		faultyMu.Lock()
		defer faultyMu.Unlock()
		s, ok := faultyStores[location]
		if !ok {
			s = &faultyStore{Store: memory.New(memory.Options{Name: location})}
			faultyStores[location] = s
		}
		return s, nil
	})
}

// faultyWorld is a world whose state store is a faultyStore.
func faultyWorld(t *testing.T) (*world, *faultyStore) {
	t.Helper()
	w := newWorld(t)
	w.state = "commitfault://" + w.dir
	st := w.store().(*faultyStore)
	saved, back := outcomeAttempts, outcomeBackoff
	outcomeAttempts, outcomeBackoff = 3, time.Millisecond
	t.Cleanup(func() { outcomeAttempts, outcomeBackoff = saved, back })
	return w, st
}

// TestCommitAppliedThenError: a commit whose answer is lost after the store
// applied it (or whose retry inside the store then conflicts with its own
// first attempt) is found applied by reading the run back: the run
// succeeds and publishes, and the next run reads nothing again.
func TestCommitAppliedThenError(t *testing.T) {
	for _, f := range []commitFault{commitThenError, conflictAfterRetry} {
		w, st := faultyWorld(t)
		w.write("a.csv", "1", "2")
		st.set(f)
		res := w.run(RunOptions{})
		st.set(commitFine)
		if res.Status != store.StatusSucceeded || res.Version != 1 {
			t.Errorf("fault %d: got status %s version %d, want succeeded at version 1", f, res.Status, res.Version)
		}
		w.wantLines("1", "2")
		if left := w.staged(); len(left) > 0 {
			t.Errorf("fault %d: staged files left: %v", f, left)
		}
		if got := w.runRecord(res.RunID).Status; got != store.StatusSucceeded {
			t.Errorf("fault %d: run record says %s, want succeeded", f, got)
		}
		w.write("b.csv", "3")
		w.run(RunOptions{})
		w.wantLines("1", "2", "3")
	}
}

// TestCommitErrorBeforeApply: a commit that never reached the store is
// found not applied: the run fails cleanly (nothing published, the
// bookmark where it was, the run recorded failed) and the next run reads
// the input once.
func TestCommitErrorBeforeApply(t *testing.T) {
	w, st := faultyWorld(t)
	w.write("a.csv", "1", "2")
	st.set(errorBeforeApply)
	res, err := w.runErr(RunOptions{})
	st.set(commitFine)
	if !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("run error: got %v, want the commit's error", err)
	}
	w.wantLines()
	if w.head() != 0 {
		t.Errorf("bookmark version %d after a commit that did not apply, want 0", w.head())
	}
	if got := w.runRecord(res.RunID).Status; got != store.StatusFailed {
		t.Errorf("run record says %s, want failed", got)
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staged files left: %v", left)
	}
	w.run(RunOptions{})
	w.wantLines("1", "2")
}

// TestCommitOutcomeUnknown: a commit whose answer is lost and whose run
// cannot be read back is not guessed at: the run fails saying so, keeps
// its staged output, and the next run publishes it (it had committed).
func TestCommitOutcomeUnknown(t *testing.T) {
	w, st := faultyWorld(t)
	w.write("a.csv", "1", "2")
	st.set(blindAfterError)
	_, err := w.runErr(RunOptions{})
	st.set(commitFine)
	var unknown *CommitUnknownError
	if !errors.As(err, &unknown) {
		t.Fatalf("run error: got %v, want a CommitUnknownError", err)
	}
	w.wantLines()
	if len(w.staged()) == 0 {
		t.Fatalf("the staged output of a commit of unknown outcome was deleted")
	}
	res := w.run(RunOptions{})
	w.wantLines("1", "2")
	if n := res.Sources["in"].Files; n != 0 {
		t.Errorf("the run after: read %d files, want 0 (the unknown commit had applied)", n)
	}
	if left := w.staged(); len(left) > 0 {
		t.Errorf("staged files left after the roll-forward: %v", left)
	}
}
