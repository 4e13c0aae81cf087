// Package memory is an in-memory store.Store: every job's state kept in
// maps inside one process, lost when the process exits. It is for tests
// and for runs whose state need not outlive the process. It registers
// itself for memory://NAME: in one process, every Open of the same NAME
// returns the same store.
//
// Values are copied in and out: a caller that changes a slice or map it
// passed in or got back does not change the store. One mutex guards the
// whole store, so every method is atomic; a write that fails checks
// everything before it changes anything, so on error nothing changed.
package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// Options configure a new store.
type Options struct {
	// Name is the store's name, shown in its Identity's Location as
	// memory://NAME; empty for an unnamed store.
	Name string
	// Now is the store's clock: it judges lease expiry and stamps times a
	// caller left zero. Nil means time.Now.
	Now func() time.Time
}

// Store is an in-memory store.Store.
type Store struct {
	mu   sync.Mutex
	now  func() time.Time
	id   store.Identity
	jobs map[string]*jobState
	cat  *catalogState
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.JobLister = (*Store)(nil)
)

// New returns a new, empty store.
func New(o Options) *Store {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	id := randomID()
	loc := "memory://" + o.Name
	if o.Name == "" {
		loc = "memory://(unnamed " + id + ")"
	}
	return &Store{now: now, id: store.Identity{ID: id, Location: loc}, jobs: map[string]*jobState{}, cat: newCatalogState()}
}

// randomID returns 16 random bytes in hex.
func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

var (
	namedMu sync.Mutex
	named   = map[string]*Store{}
)

func init() {
	store.Register("memory", func(_ context.Context, location string) (store.Store, error) {
		return Open(location)
	})
}

// Open returns the store named by location (memory://NAME), making it on
// first use: every Open of one NAME in a process returns the same store.
func Open(location string) (*Store, error) {
	name, ok := strings.CutPrefix(location, "memory://")
	if !ok || name == "" {
		return nil, fmt.Errorf("opening memory state store %q: want memory://NAME", location)
	}
	namedMu.Lock()
	defer namedMu.Unlock()
	s, ok := named[name]
	if !ok {
		s = New(Options{Name: name})
		named[name] = s
	}
	return s, nil
}

// clock returns the store's time, in UTC without a monotonic reading.
func (s *Store) clock() time.Time { return utc(s.now()) }

// utc returns t in UTC without a monotonic reading; the zero time stays zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}

// job returns the state of job, made empty on first use. s.mu is held.
func (s *Store) job(name string) *jobState {
	j, ok := s.jobs[name]
	if !ok {
		j = newJobState()
		s.jobs[name] = j
	}
	return j
}

// Identity returns the id made at random by New and memory://NAME.
func (s *Store) Identity(context.Context) (store.Identity, error) { return s.id, nil }

// Stats reports the number of jobs, runs, current and superseded file
// records and outputs held ("jobs", "runs", "files", "outputs").
func (s *Store) Stats(context.Context) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := map[string]int64{"jobs": int64(len(s.jobs))}
	for _, j := range s.jobs {
		st["runs"] += int64(len(j.runs))
		st["files"] += int64(len(j.files))
		for _, r := range j.runs {
			st["outputs"] += int64(len(r.outputs))
		}
	}
	return st, nil
}

// Jobs lists the jobs that have runs or bookmark versions, sorted.
func (s *Store) Jobs(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var jobs []string
	for name, j := range s.jobs {
		if len(j.runs) > 0 || len(j.versions) > 0 {
			jobs = append(jobs, name)
		}
	}
	slices.Sort(jobs)
	return jobs, nil
}

// Close does nothing: a named store stays for the next Open.
func (s *Store) Close() error { return nil }
