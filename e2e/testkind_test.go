package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

// kindtestBin is the CLI built with -tags kindtest, which links the
// test-only source kind internal/kindtest/memsource by one import.
var (
	kindtestOnce sync.Once
	kindtestBin  string
	kindtestErr  error
)

// buildKindtest builds the kindtest CLI once per test binary.
func buildKindtest(t *testing.T) string {
	t.Helper()
	kindtestOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			kindtestErr = err
			return
		}
		kindtestBin = filepath.Join(filepath.Dir(tidemarkBin), "tidemark-kindtest")
		build := exec.Command("go", "build", "-tags", "kindtest", "-o", kindtestBin, "./cmd/tidemark")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=1")
		if out, err := build.CombinedOutput(); err != nil {
			kindtestErr = fmt.Errorf("go build -tags kindtest: %w\n%s", err, out)
		}
	})
	if kindtestErr != nil {
		t.Fatalf("building the kindtest CLI: %v", kindtestErr)
	}
	return kindtestBin
}

// TestTestKind: a source kind that only its own package knows (memsource,
// linked by one import under the build tag kindtest) is run, planned,
// listed, shown in the bookmark and by serve's API, and reset, each time as
// the kind shows itself, with its records named by its kind and read back.
func TestTestKind(t *testing.T) {
	bin := buildKindtest(t)
	dir := t.TempDir()
	run := func(args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = dir, baseEnv()
		var stdout, stderr syncbuf.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		return finish(t, ctx, args, start, err, &stdout, &stderr)
	}
	writeJob := func(items string) {
		t.Helper()
		job := "job: listjob\nsources:\n  - ctx: events\n    items: [" + items + "]\nsinks:\n  - ctx: out\n    path: out/\n    format: csv\n"
		if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := func(r result, code int, out string, parts ...string) {
		t.Helper()
		if r.code != code {
			t.Fatalf("tidemark %v: exit %d, want %d\n%v", r.args, r.code, code, r)
		}
		for _, p := range parts {
			if !strings.Contains(out, p) {
				t.Errorf("tidemark %v: output lacks %q\n%s", r.args, p, out)
			}
		}
	}

	writeJob("a, b")
	r := run("run", "job.yaml")
	want(r, 0, r.stderr, "  source events: memory list, 2 items after item 0, 2 rows\n", "  sink out: 1 files, 2 rows\n")

	writeJob("a, b, c")
	r = run("plan", "job.yaml")
	want(r, 0, r.stdout, "source events (memory list): 1 items to read after item 2\n  c\n")
	r = run("plan", "job.yaml", "--json")
	var plan struct {
		Sources map[string]map[string]any `json:"sources"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, r.stdout)
	}
	if p := plan.Sources["events"]; p["kind"] != "memlist" || p["items"] != 1.0 || p["after"] != 2.0 {
		t.Errorf("plan --json: events = %v, want kind memlist, 1 item after 2", p)
	}

	r = run("run", "job.yaml", "--json")
	var res struct {
		Sources map[string]map[string]any `json:"sources"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("run --json: %v\n%s", err, r.stdout)
	}
	if s := res.Sources["events"]; s["kind"] != "memlist" || s["items"] != 1.0 || s["rows"] != 1.0 {
		t.Errorf("run --json: events = %v, want kind memlist, 1 item, 1 row", s)
	}

	r = run("runs", "job.yaml")
	want(r, 0, r.stdout, "    source events: memory list, 1 items after item 2, 1 rows\n",
		"    source events: memory list, 2 items after item 0, 2 rows\n")
	r = run("bookmark", "show", "job.yaml")
	want(r, 0, r.stdout, "  source events (memory list): 3 items read by 2 runs\n")
	r = run("bookmark", "show", "job.yaml", "--json")
	var bm struct {
		Sources map[string]map[string]any `json:"sources"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &bm); err != nil {
		t.Fatalf("bookmark show --json: %v\n%s", err, r.stdout)
	}
	if s := bm.Sources["events"]; s["kind"] != "memlist" || s["next"] != 3.0 || s["list_runs"] != 2.0 {
		t.Errorf("bookmark show --json: events = %v, want kind memlist, next 3, 2 runs", s)
	}
	cliBookmark := strings.TrimSpace(r.stdout)

	// serve answers with the same shapes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "--state", filepath.Join(dir, ".tidemark", "state.db"), "--listen", addr)
	srv.Dir, srv.Env = dir, baseEnv()
	var srvErr syncbuf.Buffer
	srv.Stderr = &srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(srvErr.String(), "serving"); {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", srvErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := strings.TrimSpace(get("/api/v1/jobs/listjob/bookmark")); got != cliBookmark {
		t.Errorf("GET bookmark:\n%s\nbookmark show --json:\n%s", got, cliBookmark)
	}
	if got := get("/api/v1/jobs/listjob"); !strings.Contains(got, `"shown":{"events":[{"label":"items read","value":3,"format":"int","test":"list-items"},{"label":"runs that read items","value":2,"format":"int","test":"list-runs"}]}`) {
		t.Errorf("GET job: the dashboard is not given the kind's pairs\n%s", got)
	}
	if got := get("/api/v1/jobs/listjob/runs"); !strings.Contains(got, `"events":{"files":0,"bytes":0,"rows":1,"kind":"memlist","items":1,"after":2}`) {
		t.Errorf("GET runs: the newest run's source is not the kind's count\n%s", got)
	}

	// A reset makes the next run read every item again.
	r = run("bookmark", "reset", "job.yaml")
	want(r, 0, r.stderr, "bookmark cleared")
	r = run("run", "job.yaml")
	want(r, 0, r.stderr, "  source events: memory list, 3 items after item 0, 3 rows\n")
}
