package lineage_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/internal/syncbuf"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/lineage"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
)

// receiver is a local OpenLineage endpoint that keeps what it receives.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	auth   []string
	paths  []string
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.bodies = append(rc.bodies, body)
		rc.auth = append(rc.auth, r.Header.Get("Authorization"))
		rc.paths = append(rc.paths, r.URL.Path)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// events decodes what the receiver got, in order.
func (rc *receiver) events(t *testing.T) ([]lineage.RunEvent, [][]byte) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var evs []lineage.RunEvent
	for _, b := range rc.bodies {
		var ev lineage.RunEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("decoding event %s: %v", b, err)
		}
		evs = append(evs, ev)
	}
	return evs, append([][]byte{}, rc.bodies...)
}

// jobDir is a job over a local CSV folder, written to a Parquet folder,
// with its SQLite state in the folder.
type jobDir struct {
	t   *testing.T
	dir string
}

func newJobDir(t *testing.T) *jobDir {
	t.Helper()
	d := &jobDir{t: t, dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(d.dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *jobDir) put(name, body string) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.dir, "in", name), []byte(body), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// spec writes and loads the job file, with a transform when given.
func (d *jobDir) spec(extra string) *job.Spec {
	d.t.Helper()
	y := "job: ljob\nstate: state.db\nsources:\n  - {ctx: landing, path: in, format: csv}\n" + extra +
		"sinks:\n  - {ctx: out, path: out}\n"
	p := filepath.Join(d.dir, "job.yaml")
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		d.t.Fatal(err)
	}
	spec, err := job.Load(p)
	if err != nil {
		d.t.Fatal(err)
	}
	return spec
}

// run runs spec with lineage sent per cfg, and waits for the events
// (at most wait); it returns the result, how long the run took (without
// the wait), the log and the run's error.
func run(t *testing.T, spec *job.Spec, cfg lineage.Config, wait time.Duration) (*tidemark.Result, time.Duration, string, error) {
	t.Helper()
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c, err := lineage.NewClient(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, runErr := tidemark.Run(context.Background(), spec,
		tidemark.RunOptions{Logger: log, Observer: tidemark.LineageObserver(lineage.NewObserver(spec, c, lineage.ObserverOptions{}))})
	took := time.Since(start)
	c.Close(wait)
	return res, took, logs.String(), runErr
}
