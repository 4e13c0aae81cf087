package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	_ "github.com/tidemark-etl/tidemark/source/files"    // the file kind shows its states
	_ "github.com/tidemark-etl/tidemark/source/sqltable" // and the SQL table kind its
	"github.com/tidemark-etl/tidemark/store"
)

// evil is a job, ctx, file and error text that would run script if any
// page parsed data as HTML.
const evil = `<img src=x onerror="document.title='PWNED'">"quoted" 'single' ünïcødé ` +
	`a-very-long-name-without-spaces-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`

func result(job, run string, seq int, status string, rowsIn, rowsOut int, undone bool, started string) map[string]any {
	r := map[string]any{
		"job": job, "run_id": run, "seq": seq, "attempt": 1, "status": status, "mode": "enable",
		"sources":     map[string]any{evil: map[string]any{"files": 2, "bytes": 2048, "rows": rowsIn}},
		"sinks":       map[string]any{"out": map[string]any{"files": 1, "bytes": 1024, "rows": rowsOut}},
		"duration_ms": 1500, "version": seq, "started_at": started, "finished_at": started,
	}
	if status == "failed" {
		r["error"] = "reading " + evil + ".csv line 3: <script>document.title='PWNED'</script>"
	}
	if undone {
		r["undone"] = true
	}
	return r
}

// fakeAPI serves fixed JSON in the shapes of SERVE.md's API; job "locked"
// answers 503 as a locked store does.
func fakeAPI(t *testing.T) http.Handler {
	t.Helper()
	runs := []any{
		result("nightly", "r3", 3, "succeeded", 1500, 1400, false, "2025-01-03T00:00:00Z"),
		result("nightly", "r2", 2, "failed", 0, 0, false, "2025-01-02T00:00:00Z"),
		result("nightly", "r1", 1, "succeeded", 1000, 900, true, "2025-01-01T00:00:00Z"),
	}
	last := runs[0]
	bookmark := map[string]any{"job": "nightly", "version": 3, "run_id": "r3", "updated_at": "2025-01-03T00:00:00Z",
		"sources": map[string]any{
			evil: map[string]any{"kind": "files", "fingerprint": "fp1", "describe": "files under " + evil, "tracking": "exact", "files": 42, "bytes": 4096,
				"schema": []any{map[string]any{"name": evil, "type": "VARCHAR"}}},
			"ts": map[string]any{"kind": "files", "fingerprint": "fp2", "tracking": "timestamp", "files": 7, "bytes": 70, "high_water": 1735689600000000000,
				"band": []any{map[string]any{"path": evil + ".csv", "size": 10, "mtime": 1735689600000000000}}},
			"orders": map[string]any{"kind": "table", "fingerprint": "fp3", "files": 2, "bytes": 300, "rows": 300, "runs": 2,
				"cursor": map[string]any{"v": 1, "keys": []any{"updated_at", "id"}, "order": "asc", "mark": []any{"2025-01-03", "17"}}},
		}}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	locked := func(w http.ResponseWriter, r *http.Request) bool {
		if r.PathValue("job") == "locked" {
			reply(w, http.StatusServiceUnavailable, map[string]any{"error": "state store is locked by run r9"})
			return true
		}
		return false
	}
	mux.HandleFunc("GET /api/v1/session", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "tidemark_csrf", Value: "csrf-1", Path: "/", SameSite: http.SameSiteStrictMode})
		reply(w, 200, map[string]any{"actions": true})
	})
	mux.HandleFunc("GET /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"jobs": []any{
			map[string]any{"job": "nightly", "version": 3, "run_id": "r3", "last_run": last,
				"backlog": map[string]any{"job": "nightly", "mode": "enable", "version": 3, "sources": map[string]any{
					evil: map[string]any{"files": 5, "bytes": 5120, "new": []any{}, "modified": 0, "unchanged": 0, "deferred": 0}}}},
			map[string]any{"job": evil, "version": 0, "run_id": "", "last_run": nil, "backlog": nil, "backlog_error": "no job file known: " + evil},
		}})
	})
	mux.HandleFunc("GET /api/v1/jobs/{job}", func(w http.ResponseWriter, r *http.Request) {
		if locked(w, r) {
			return
		}
		if r.PathValue("job") != "nightly" {
			reply(w, 404, map[string]any{"error": "no job " + r.PathValue("job")})
			return
		}
		reply(w, 200, map[string]any{"job": "nightly", "version": 3, "run_id": "r3", "bookmark": bookmark, "last_run": last, "job_file": "/jobs/" + evil + ".yaml",
			"shown": shown(t, bookmark, last),
			"newest_files": map[string]any{evil: []any{map[string]any{"path": "in/new.csv", "size": 2048, "mtime": 1735689600000000000},
				map[string]any{"path": evil + ".csv", "size": 10, "mtime": 1735689500000000000}}}})
	})
	mux.HandleFunc("GET /api/v1/jobs/{job}/runs", func(w http.ResponseWriter, r *http.Request) {
		if locked(w, r) {
			return
		}
		if r.URL.Query().Get("before") == "" {
			reply(w, 200, map[string]any{"runs": runs[:2], "next_before": 2})
			return
		}
		reply(w, 200, map[string]any{"runs": runs[2:], "next_before": 0})
	})
	mux.HandleFunc("GET /api/v1/jobs/{job}/runs/{run}", func(w http.ResponseWriter, r *http.Request) {
		if locked(w, r) {
			return
		}
		reply(w, 200, map[string]any{"run": runs[1],
			"outputs":  map[string]any{"items": []any{map[string]any{"run_id": "r2", "sink": "out", "kind": "file", "root": "/data/out/", "final": evil + ".parquet", "rows": 10, "bytes": 100, "published": true}}, "total": 250},
			"inputs":   map[string]any{"items": []any{map[string]any{"ctx": evil, "path": evil + ".csv", "size": 2048, "mtime": 1735689600000000000, "etag": `"e1"`}}, "total": 1},
			"attempts": []any{runs[1]},
			"bookmark_diff": map[string]any{"version": 3, "before": 2, "sources": map[string]any{
				evil: map[string]any{
					"before": map[string]any{"kind": "files", "tracking": "exact", "files": 40, "bytes": 4000, "fingerprint": "fp1",
						"schema": []any{map[string]any{"name": "id", "type": "BIGINT"}, map[string]any{"name": "gone", "type": "VARCHAR"}}},
					"after": map[string]any{"kind": "files", "tracking": "exact", "files": 42, "bytes": 4096, "fingerprint": "fp1",
						"schema": []any{map[string]any{"name": "id", "type": "BIGINT"}, map[string]any{"name": evil, "type": "VARCHAR"}}}},
				"new": map[string]any{"before": nil, "after": map[string]any{"kind": "files", "tracking": "timestamp", "files": 1, "bytes": 10,
					"high_water": 1735689600000000000}},
			}}})
	})
	mux.HandleFunc("GET /api/v1/jobs/{job}/history", func(w http.ResponseWriter, r *http.Request) {
		if locked(w, r) {
			return
		}
		reply(w, 200, map[string]any{"versions": []any{
			map[string]any{"version": 4, "kind": "rewind", "run_id": "r1", "at": "2025-01-02T12:00:00Z", "by": "serve 127.0.0.1:5 " + evil},
			map[string]any{"version": 3, "kind": "commit", "run_id": "r3", "at": "2025-01-02T06:00:00Z", "by": ""},
			map[string]any{"version": 2, "kind": "reset", "run_id": "", "at": "2025-01-01T12:00:00Z", "by": "cli alice@host"},
		}, "next_before": 0})
	})
	mux.HandleFunc("POST /api/v1/jobs/{job}/reset", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("X-Tidemark-CSRF") != "csrf-1" {
			reply(w, 403, map[string]any{"error": "forbidden"})
			return
		}
		reply(w, 200, map[string]any{"undo": []any{"r3"}, "delete": []any{"/data/out/" + evil + ".parquet"}})
	})
	mux.Handle("GET /", http.FileServerFS(Assets()))
	return mux
}

func TestFakeAPIServesThePages(t *testing.T) {
	srv := httptest.NewServer(fakeAPI(t))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if got, want := res.StatusCode, 200; got != want {
		t.Fatalf("GET /: got %d, want %d", got, want)
	}
	if got := res.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/html") {
		t.Errorf("GET /: got Content-Type %q, want text/html", got)
	}
	js, err := http.Get(srv.URL + "/js/app.js")
	if err != nil {
		t.Fatal(err)
	}
	js.Body.Close()
	if got := js.Header.Get("Content-Type"); !strings.Contains(got, "javascript") {
		t.Errorf("GET /js/app.js: got Content-Type %q, want JavaScript", got)
	}
}

// shown is what the server sends of each source state of bm for the
// dashboard: the pairs its kind shows (bookmark.StateDetail.Pairs), given
// its count in the last run.
func shown(t *testing.T, bm map[string]any, last any) map[string][]bookmark.Pair {
	t.Helper()
	var parsed struct {
		Sources map[string]bookmark.SourceState `json:"sources"`
	}
	var run struct {
		Sources map[string]store.Count `json:"sources"`
	}
	if err := json.Unmarshal(mustJSON(t, bm), &parsed); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustJSON(t, last), &run); err != nil {
		t.Fatal(err)
	}
	out := map[string][]bookmark.Pair{}
	for k, s := range parsed.Sources {
		var c bookmark.Counts
		if n, ok := run.Sources[k]; ok {
			c = n
		}
		out[k] = s.View().Pairs(s, c)
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
