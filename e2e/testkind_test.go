package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
	// The job's lineage goes to a local collector.
	var lmu sync.Mutex
	var events []map[string]any
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev map[string]any
		_ = json.Unmarshal(body, &ev)
		lmu.Lock()
		events = append(events, ev)
		lmu.Unlock()
	}))
	defer collector.Close()
	writeJob := func(items string) {
		t.Helper()
		job := "job: listjob\nlineage: {url: " + collector.URL + "}\nsources:\n  - ctx: events\n    items: [" + items + "]\nsinks:\n  - ctx: out\n    log: outlog/\n"
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

	// logged is the items of run log outlog/RUN.jsonl ("": none).
	logged := func(runID string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "outlog", runID+".jsonl"))
		if os.IsNotExist(err) {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		var items []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var row struct{ Item string }
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("outlog/%s.jsonl: %v\n%s", runID, err, b)
			}
			items = append(items, row.Item)
		}
		return strings.Join(items, ",")
	}

	writeJob("a, b")
	r := run("run", "job.yaml", "--json")
	var first struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &first); err != nil || first.RunID == "" {
		t.Fatalf("run --json: %v\n%s", err, r.stdout)
	}
	if got := logged(first.RunID); got != "a,b" {
		t.Errorf("run log of run %s holds %q, want a,b", first.RunID, got)
	}
	// Lineage names the memory list and the run log as their kinds do.
	lmu.Lock()
	if len(events) != 2 {
		t.Errorf("lineage: %d events, want START and COMPLETE", len(events))
	} else {
		ds := func(key string) string {
			l, _ := events[1][key].([]any)
			if len(l) != 1 {
				return fmt.Sprint(l)
			}
			m, _ := l[0].(map[string]any)
			return fmt.Sprint(m["namespace"], " ", m["name"])
		}
		if got := ds("inputs"); got != "memlist listjob/a" {
			t.Errorf("lineage inputs: %s, want memlist listjob/a", got)
		}
		if got, want := ds("outputs"), "runlog "+filepath.Join(dir, "outlog"); got != want {
			t.Errorf("lineage outputs: %s, want %s", got, want)
		}
	}
	lmu.Unlock()

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
		RunID   string                    `json:"run_id"`
		Sources map[string]map[string]any `json:"sources"`
		Sinks   map[string]map[string]any `json:"sinks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("run --json: %v\n%s", err, r.stdout)
	}
	if s := res.Sources["events"]; s["kind"] != "memlist" || s["items"] != 1.0 || s["rows"] != 1.0 {
		t.Errorf("run --json: events = %v, want kind memlist, 1 item, 1 row", s)
	}
	if s := res.Sinks["out"]; s["files"] != 1.0 || s["rows"] != 1.0 {
		t.Errorf("run --json: sink out = %v, want 1 file, 1 row", s)
	}
	if got := logged(res.RunID); got != "c" {
		t.Errorf("run log of run %s holds %q, want c", res.RunID, got)
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

	outs := get("/api/v1/jobs/listjob/runs/" + res.RunID)
	if !strings.Contains(outs, `"kind":"run_log","root":`+strconv.Quote(filepath.Join(dir, "outlog"))) ||
		!strings.Contains(outs, `"final":"`+res.RunID+`.jsonl","rows":1`) {
		t.Errorf("GET run %s: its output is not the run log's record\n%s", res.RunID, outs)
	}
	if !strings.Contains(outs, `"shown_after":[{"label":"items read","value":3,"format":"int","test":"list-items"}`) {
		t.Errorf("GET run %s: its bookmark diff does not compare the memory list as the kind shows it\n%s", res.RunID, outs)
	}

	// Another job may not write into the run log: its ownership record
	// names listjob (exit 2, nothing written).
	other := "job: otherjob\nsources:\n  - ctx: events\n    items: [x]\nsinks:\n  - ctx: out\n    log: outlog/\n"
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run("run", "other.yaml")
	want(r, 2, r.stderr, `outlog belongs to job "listjob"`)
	if ents, _ := os.ReadDir(filepath.Join(dir, "outlog")); len(ents) != 3 {
		t.Errorf("the refused run changed the run log: %d entries, want 2 runs' files and _tidemark", len(ents))
	}

	// A reset's preview names each run's file as the run log's purge does,
	// and changes nothing; the purge deletes them.
	named := func(id string) string { return "run log " + filepath.Join(dir, "outlog") + ": " + id + ".jsonl" }
	r = run("bookmark", "reset", "job.yaml", "--purge-output", "--dry-run")
	want(r, 0, r.stdout+r.stderr, named(first.RunID), named(res.RunID))
	if logged(first.RunID) != "a,b" || logged(res.RunID) != "c" {
		t.Errorf("reset --dry-run changed the run log")
	}
	r = run("bookmark", "reset", "job.yaml", "--purge-output")
	want(r, 0, r.stderr, "bookmark cleared", "deleted "+named(first.RunID), "deleted "+named(res.RunID))
	if logged(first.RunID) != "" || logged(res.RunID) != "" {
		t.Errorf("reset --purge-output left the runs' files in the run log")
	}
	// The next run reads every item again, into the log once.
	r = run("run", "job.yaml", "--json")
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("run --json: %v\n%s", err, r.stdout)
	}
	if s := res.Sources["events"]; s["items"] != 3.0 || s["after"] != 0.0 {
		t.Errorf("run after reset: events = %v, want 3 items after 0", s)
	}
	if got := logged(res.RunID); got != "a,b,c" {
		t.Errorf("run log of run %s holds %q, want a,b,c", res.RunID, got)
	}
}
