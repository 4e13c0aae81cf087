package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	"github.com/tidemark-etl/tidemark/serve"
	"github.com/tidemark-etl/tidemark/store"
)

// world is a folder with a CSV job, its SQLite state filled by real
// DuckDB runs, and a server over that state.
type world struct {
	t       *testing.T
	dir     string
	in, out string
	state   string
	jobFile string
	token   string
	logs    strings.Builder
	srv     *httptest.Server
	st      store.Store
}

// jobName is the test job's name (job names are letters, digits, _ - .).
const jobName = "sales-daily.v1"

// newWorld makes the folder and job file; no runs yet, no server.
func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	w := &world{t: t, dir: dir, in: filepath.Join(dir, "in"), out: filepath.Join(dir, "out"),
		state: filepath.Join(dir, "state.db"), jobFile: filepath.Join(dir, "job.yaml")}
	if err := os.MkdirAll(w.in, 0o755); err != nil {
		t.Fatal(err)
	}
	yml := fmt.Sprintf("job: %q\nsources:\n  - ctx: orders\n    path: %s\n    format: csv\n    options: {header: true}\n"+
		"sinks:\n  - ctx: sink\n    from: orders\n    path: %s\n    format: csv\n", jobName, w.in, w.out)
	if err := os.WriteFile(w.jobFile, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// write makes an input CSV with rows data rows.
func (w *world) write(name string, rows int) {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("id,amount\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,%d\n", i, i*10)
	}
	p := filepath.Join(w.in, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		w.t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(p, old, old); err != nil {
		w.t.Fatal(err)
	}
}

// run runs the job once with the DuckDB engine and returns its run id.
func (w *world) run() string {
	w.t.Helper()
	spec, err := job.Load(w.jobFile)
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := tidemark.Run(context.Background(), spec, tidemark.RunOptions{State: w.state})
	if err != nil {
		w.t.Fatalf("run: %v", err)
	}
	return res.RunID
}

// runFailing runs the job with a transform that fails in the engine and
// returns the failed run's id.
func (w *world) runFailing() string {
	w.t.Helper()
	data, err := os.ReadFile(w.jobFile)
	if err != nil {
		w.t.Fatal(err)
	}
	bad := strings.Replace(string(data), "sinks:", "transforms:\n  broken: SELECT no_such_column FROM orders\nsinks:", 1)
	bad = strings.Replace(bad, "from: orders", "from: broken", 1)
	spec, err := job.Parse(w.jobFile, []byte(bad))
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := tidemark.Run(context.Background(), spec, tidemark.RunOptions{State: w.state})
	if err == nil || res == nil {
		w.t.Fatalf("run with a broken transform: got %v, %v, want a failed run", res, err)
	}
	return res.RunID
}

// threeRuns writes and runs three files, one per run.
func (w *world) threeRuns() []string {
	w.t.Helper()
	var ids []string
	for i, name := range []string{"a.csv", "b.csv", "c.csv"} {
		w.write(name, i+1)
		ids = append(ids, w.run())
	}
	return ids
}

// serve starts the server over the state, read-only, with opts changed
// by edit.
func (w *world) serve(edit func(*serve.Options)) {
	w.t.Helper()
	st, err := store.OpenExisting(context.Background(), w.state, true)
	if err != nil {
		w.t.Fatal(err)
	}
	w.st = st
	w.t.Cleanup(func() { st.Close() })
	opts := serve.Options{Store: st, StateLocation: w.state, Token: w.token,
		Logger: slog.New(slog.NewTextHandler(&w.logs, nil))}
	if edit != nil {
		edit(&opts)
	}
	h, err := serve.New(opts)
	if err != nil {
		w.t.Fatal(err)
	}
	w.srv = httptest.NewServer(h)
	w.t.Cleanup(w.srv.Close)
}

// do sends a request and returns the status and body.
func (w *world) do(req *http.Request) (int, []byte) {
	w.t.Helper()
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatal(err)
	}
	return resp.StatusCode, body
}

// get GETs path and returns the status and body.
func (w *world) get(path string) (int, []byte) {
	w.t.Helper()
	req, err := http.NewRequest("GET", w.srv.URL+path, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.do(req)
}

// getJSON GETs path, wants 200, and decodes the body into v.
func (w *world) getJSON(path string, v any) {
	w.t.Helper()
	code, body := w.get(path)
	if code != http.StatusOK {
		w.t.Fatalf("GET %s: got %d %s, want 200", path, code, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		w.t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

// jobPath is the API path of the test job, escaped.
func jobPath(rest string) string {
	return "/api/v1/jobs/" + url.PathEscape(jobName) + rest
}
