package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// TestOpenAPIListsEveryRoute: the document's paths and methods are
// exactly the registered routes.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	var registered []string
	for _, r := range apiRoutes {
		registered = append(registered, r.method+" "+r.pattern)
	}
	b, err := json.Marshal(openAPIDoc()) // what is served, through JSON
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(registered)
	slices.Sort(documented)
	if !slices.Equal(registered, documented) {
		t.Errorf("routes: registered %q, documented %q", registered, documented)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Errorf("openapi: got %q, want 3.0.x", doc.OpenAPI)
	}
}

// countingStore records the Limit of every Runs query.
type countingStore struct {
	store.Store
	mu     sync.Mutex
	limits []int
}

func (c *countingStore) Runs(ctx context.Context, job string, q store.RunQuery) ([]store.Run, error) {
	c.mu.Lock()
	c.limits = append(c.limits, q.Limit)
	c.mu.Unlock()
	return c.Store.Runs(ctx, job, q)
}

func (c *countingStore) Jobs(ctx context.Context) ([]string, error) {
	return c.Store.(store.JobLister).Jobs(ctx)
}

// fill commits n runs of job into st directly.
func fill(t *testing.T, st store.Store, job string, n int) {
	t.Helper()
	ctx := context.Background()
	l, err := st.AcquireLease(ctx, job, store.Holder{ID: "fill"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r, err := st.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: fmt.Sprintf("run-%05d", i), Mode: bookmark.ModeEnable})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		if _, err := st.Commit(ctx, store.Commit{Job: job, Token: l.Token, BaseVersion: int64(i), Advance: true, Run: r}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLargeHistoryPagesBounded: over 10k runs, every route reads runs in
// bounded queries.
func TestLargeHistoryPagesBounded(t *testing.T) {
	st := &countingStore{Store: memory.New(memory.Options{})}
	fill(t, st.Store, "big", 10_000)
	h, err := New(Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, p := range []string{"/api/v1/jobs", "/api/v1/jobs/big", "/api/v1/jobs/big/runs?limit=50",
		"/api/v1/jobs/big/runs?limit=50&before=5000", "/api/v1/jobs/big/runs/run-04999", "/api/v1/jobs/big/bookmark"} {
		st.limits = nil
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: got %d, want 200", p, resp.StatusCode)
		}
		for _, l := range st.limits {
			if l <= 0 || l > maxLimit+1 {
				t.Errorf("GET %s: got a Runs query with Limit %d, want 1..%d", p, l, maxLimit+1)
			}
		}
	}
}

// brokenStore fails every read as an unreachable store would.
type brokenStore struct{ store.Store }

var errDown = errors.New("dial tcp 10.0.0.1:5432: connect: connection refused")

func (brokenStore) Head(context.Context, string) (store.Head, error) { return store.Head{}, errDown }
func (brokenStore) Runs(context.Context, string, store.RunQuery) ([]store.Run, error) {
	return nil, errDown
}
func (brokenStore) Jobs(context.Context) ([]string, error) { return nil, errDown }

// TestStoreDownIs503: an unreachable store answers 503 with a JSON error.
func TestStoreDownIs503(t *testing.T) {
	// httptest.NewRequest's Host is example.com.
	h, err := New(Options{Store: brokenStore{memory.New(memory.Options{})}, AllowHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/api/v1/jobs", "/api/v1/jobs/j", "/api/v1/jobs/j/runs", "/api/v1/jobs/j/bookmark", "/api/v1/jobs/j/plan"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusServiceUnavailable ||
			!strings.Contains(e.Error, "state store") || strings.Contains(rec.Body.String(), "goroutine") {
			t.Errorf("GET %s: got %d %s, want 503 with a JSON error about the state store", p, rec.Code, rec.Body)
		}
	}
}

// TestErrorsAreJSON: an unknown route, a wrong method and an unknown job
// answer a JSON error, markup in it escaped.
func TestErrorsAreJSON(t *testing.T) {
	st := memory.New(memory.Options{})
	fill(t, st, "j", 1)
	h, err := New(Options{Store: st, AllowHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/v1/nope", http.StatusNotFound},
		{"DELETE", "/api/v1/jobs/j", http.StatusMethodNotAllowed},
		{"GET", "/api/v1/jobs/j/reset", http.StatusMethodNotAllowed},
		{"GET", "/api/v1/jobs/%3Cscript%3E", http.StatusNotFound},
		{"GET", "/api/v1/jobs/j/runs/%3Cscript%3E", http.StatusNotFound},
		{"POST", "/", http.StatusMethodNotAllowed},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != c.code || e.Error == "" ||
			strings.Contains(rec.Body.String(), "<script>") || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: got %d %s, want %d with an escaped JSON error", c.method, c.path, rec.Code, rec.Body, c.code)
		}
	}
}
