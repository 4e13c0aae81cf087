package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// glueTimeout bounds one `tidemark glue run`: a script starts a JVM.
const glueTimeout = 6 * time.Minute

// gluePython is the Python with pyspark the test script set up (the Spark
// engine's venv). Without it the test fails, saying to run scripts/test.sh.
func gluePython(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TIDEMARK_TEST_SPARK_PYTHON"); p != "" {
		return p
	}
	if os.Getenv("TIDEMARK_SKIP_SPARK") == "1" {
		t.Skip("TIDEMARK_SKIP_SPARK=1: no pyspark")
	}
	t.Fatal("TIDEMARK_TEST_SPARK_PYTHON is not set: run the tests through scripts/test.sh, which makes a pyspark venv")
	return ""
}

// glueScript is a Glue-style script: the article's, reading the folder
// --IN and writing Parquet to --OUT, with the faults the tests need
// (--WAIT_AFTER: print a line and sleep after that step).
const glueScript = `import os, sys, time
from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions

args = getResolvedOptions(sys.argv, ["JOB_NAME", "IN", "OUT", "WAIT_AFTER"])

sc = SparkContext.getOrCreate()
sc.setLogLevel("ERROR")
glue_context = GlueContext(sc)

job = Job(glue_context)
job.init(args["JOB_NAME"], args)
if args["WAIT_AFTER"] == "init":
    print("INITED", os.getpid(), flush=True)
    time.sleep(float(os.environ.get("GLUE_TEST_SLEEP", "600")))

source = glue_context.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [args["IN"]], "recurse": True},
    format="csv",
    format_options={"withHeader": True},
    transformation_ctx="orders_source",
)

glue_context.write_dynamic_frame.from_options(
    frame=source,
    connection_type="s3",
    connection_options={"path": args["OUT"]},
    format="parquet",
    transformation_ctx="orders_sink",
)
if args["WAIT_AFTER"] == "write":
    print("WRITTEN", os.getpid(), flush=True)
    time.sleep(600)

job.commit()
if args["WAIT_AFTER"] == "commit":
    os.kill(os.getpid(), 9)
print("COMMITTED", flush=True)
`

// noSpark is the environment of a run that must not start Spark:
// SPARK_HOME names an empty folder, so starting Spark's JVM fails.
func noSpark(t *testing.T) []string {
	return []string{"SPARK_HOME=" + t.TempDir()}
}

// glueWorld is a folder with the script, its input and output places.
type glueWorld struct {
	dir    string
	python string
	env    []string
	in     place
	out    place
}

func newGlueWorld(t *testing.T, be backend) *glueWorld {
	t.Helper()
	w := &glueWorld{dir: t.TempDir(), python: gluePython(t)}
	if err := os.WriteFile(filepath.Join(w.dir, "script.py"), []byte(glueScript), 0o644); err != nil {
		t.Fatal(err)
	}
	w.in = newPlace(t, be, filepath.Join(w.dir, "in"), "sales")
	w.out = newPlace(t, be, filepath.Join(w.dir, "out"), "out")
	if be == onS3 {
		w.env = sharedS3(t).env()
	}
	return w
}

// land puts n CSV files of 5 orders each under day/, ids from first on.
func (w *glueWorld) land(t *testing.T, day string, n, first int) int {
	t.Helper()
	return w.landAs(t, day+"/orders-%02d.csv", n, first)
}

// landAs is land with the files' keys made from nameFmt and their number.
func (w *glueWorld) landAs(t *testing.T, nameFmt string, n, first int) int {
	t.Helper()
	id := first
	for i := 0; i < n; i++ {
		var b strings.Builder
		b.WriteString("order_id,product,amount\n")
		for r := 0; r < 5; r++ {
			fmt.Fprintf(&b, "%d,p%d,%d.25\n", id, id%3, id)
			id++
		}
		w.in.put(t, fmt.Sprintf(nameFmt, i), []byte(b.String()))
	}
	return id
}

// args are the script's argv after script.py.
func (w *glueWorld) args(mode, waitAfter string, extra ...string) []string {
	a := []string{"--JOB_NAME", "sales", "--IN", w.in.loc(), "--OUT", w.out.loc(), "--WAIT_AFTER", waitAfter,
		"--job-bookmark-option", mode}
	return append(a, extra...)
}

func (w *glueWorld) glue(t *testing.T, env []string, scriptArgs ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), glueTimeout)
	defer cancel()
	args := append([]string{"glue", "run", "--python", w.python, "script.py"}, scriptArgs...)
	cmd, stdout, stderr := command(ctx, w.dir, append(append([]string{}, w.env...), env...), args...)
	start := time.Now()
	return finish(t, ctx, args, start, cmd.Run(), stdout, stderr)
}

// startGlue starts a run and waits until its script prints want.
func (w *glueWorld) startGlue(t *testing.T, want string, scriptArgs ...string) (*proc, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), glueTimeout)
	args := append([]string{"glue", "run", "--python", w.python, "script.py"}, scriptArgs...)
	cmd, stdout, stderr := command(ctx, w.dir, w.env, args...)
	p := &proc{args: args, cmd: cmd, ctx: ctx, cancel: cancel, stdout: stdout, stderr: stderr, start: time.Now(), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.done; cancel() })
	deadline := time.After(glueTimeout)
	for {
		for _, line := range strings.Split(stdout.String(), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == want {
				var pid int
				fmt.Sscan(f[1], &pid)
				return p, pid
			}
		}
		select {
		case <-p.done:
			t.Fatalf("the script ended before it printed %s:\n%s\n%s", want, stdout.String(), stderr.String())
		case <-deadline:
			t.Fatalf("the script did not print %s in time", want)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ids reads every order_id the sink published, with DuckDB.
func (w *glueWorld) ids(t *testing.T) []int64 {
	t.Helper()
	dir := w.out.mirror(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if len(files) == 0 {
		return nil
	}
	rows, err := duck.Query(fmt.Sprintf("SELECT order_id FROM read_parquet('%s/*.parquet') ORDER BY order_id", dir))
	if err != nil {
		t.Fatalf("reading the sink back: %v", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// wantIDs checks the sink holds exactly the ids [1, upTo), each once.
func wantIDs(t *testing.T, got []int64, upTo int, when string) {
	t.Helper()
	if len(got) != upTo-1 {
		t.Errorf("%s: the sink holds %d orders, want %d", when, len(got), upTo-1)
		return
	}
	for i, id := range got {
		if id != int64(i+1) {
			t.Errorf("%s: order %d is %d, want each of 1..%d exactly once", when, i, id, upTo-1)
			return
		}
	}
}

func (w *glueWorld) bookmark(t *testing.T) map[string]any {
	t.Helper()
	r := tidemark(t, w.dir, w.env, "bookmark", "show", "sales", "--state", filepath.Join(w.dir, ".tidemark", "state.db"), "--json")
	if r.code != 0 {
		t.Fatalf("bookmark show: %v", r)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("bookmark show --json: %v\n%s", err, r.stdout)
	}
	return out
}

func (w *glueWorld) runs(t *testing.T) []map[string]any {
	t.Helper()
	r := tidemark(t, w.dir, w.env, "runs", "sales", "--state", filepath.Join(w.dir, ".tidemark", "state.db"), "--json")
	if r.code != 0 {
		t.Fatalf("runs: %v", r)
	}
	var out []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, r.stdout)
	}
	return out
}

// TestGlueScriptThreeDays: the article's script over three days of sales
// files on S3 (Monday 10 files, Tuesday 5, then nothing): each run's
// output holds exactly the cumulative orders, the third writes nothing;
// runs and bookmark show show the script's runs and its orders_source ctx;
// disable reads everything again, pause with from/to re-reads one run's
// input.
func TestGlueScriptThreeDays(t *testing.T) {
	w := newGlueWorld(t, onS3)
	next := w.land(t, "2026-12-07", 10, 1)
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("Monday: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after Monday")
	next = w.land(t, "2026-12-08", 5, next)
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("Tuesday: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after Tuesday")
	// Nothing new: the run starts no Spark (with no Spark installation to
	// start it would fail if it tried).
	if r := w.glue(t, noSpark(t), w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("Wednesday: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after Wednesday (nothing new)")

	runs := w.runs(t)
	if len(runs) != 3 {
		t.Fatalf("runs: got %d, want 3", len(runs))
	}
	for i, want := range []struct{ files, rows float64 }{{0, 0}, {5, 25}, {10, 50}} { // newest first
		src := runs[i]["sources"].(map[string]any)["orders_source"].(map[string]any)
		snk, _ := runs[i]["sinks"].(map[string]any)["orders_sink"].(map[string]any)
		rows, _ := snk["rows"].(float64)
		if src["files"].(float64) != want.files || rows != want.rows || runs[i]["status"] != "succeeded" {
			t.Errorf("run %d: source %v, sink %v, status %v; want %v files read and %v rows written", i, src, snk, runs[i]["status"], want.files, want.rows)
		}
	}
	bm := w.bookmark(t)
	if !strings.Contains(fmt.Sprint(bm), "orders_source") {
		t.Errorf("bookmark show does not name orders_source: %v", bm)
	}

	// disable: everything again, into another folder; the bookmark stays.
	other := newPlace(t, onS3, filepath.Join(w.dir, "again"), "again")
	a := w.args("job-bookmark-disable", "none")
	a[5] = other.loc()
	if r := w.glue(t, nil, a...); r.code != 0 {
		t.Fatalf("disable: %v", r)
	}
	again := &glueWorld{out: other}
	wantIDs(t, again.ids(t), next, "disable's output")

	// pause from Monday's run to Tuesday's: Tuesday's input exactly.
	monday, tuesday := runs[2]["run_id"].(string), runs[1]["run_id"].(string)
	paused := newPlace(t, onS3, filepath.Join(w.dir, "paused"), "paused")
	p := w.args("job-bookmark-pause", "none", "--job-bookmark-from", monday, "--job-bookmark-to", tuesday)
	p[5] = paused.loc()
	if r := w.glue(t, nil, p...); r.code != 0 {
		t.Fatalf("pause: %v", r)
	}
	got := (&glueWorld{out: paused}).ids(t)
	if len(got) != 25 || got[0] != 51 || got[24] != 75 {
		t.Errorf("pause from Monday to Tuesday wrote %d orders (%v...), want Tuesday's 25 (51..75)", len(got), got[:min(3, len(got))])
	}
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("enable after pause and disable: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after pause and disable")
}

// TestGlueScriptKilledBeforeCommit: a script killed between its write and
// job.commit() — by the fault hook and by a real kill -9 — publishes
// nothing and leaves the bookmark where it was; the next run reads the
// same input, exactly once.
func TestGlueScriptKilledBeforeCommit(t *testing.T) {
	w := newGlueWorld(t, local)
	next := w.land(t, "mon", 3, 1)

	r := w.glue(t, []string{"TIDEMARK_FAULT=before-commit"}, w.args("job-bookmark-enable", "none")...)
	if r.code == 0 || !strings.Contains(r.stderr, "nothing it wrote") {
		t.Errorf("fault hook: got %v, want a non-zero exit saying nothing was published", r)
	}
	if got := w.ids(t); len(got) != 0 {
		t.Errorf("after the fault hook the sink holds %d orders, want none", len(got))
	}

	p, pid := w.startGlue(t, "WRITTEN", w.args("job-bookmark-enable", "write")...)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if p.err == nil {
		t.Errorf("kill -9 of the script: tidemark glue run exited 0, want a failure")
	}
	if got := w.ids(t); len(got) != 0 {
		t.Errorf("after kill -9 the sink holds %d orders, want none", len(got))
	}
	if v := w.bookmark(t)["version"]; v != float64(0) {
		t.Errorf("after two killed runs the bookmark is at version %v, want 0", v)
	}
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("the run after the kills: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after the rerun")
	for _, run := range w.runs(t)[1:] {
		if run["status"] != "failed" {
			t.Errorf("a killed run is recorded as %v, want failed", run["status"])
		}
	}
}

// TestGlueScriptKilledAfterCommit: a script killed right after its
// job.commit() returned: glue run fails (the script died), but says that
// the run was published rather than that nothing was; the output is there
// once and the next run reads nothing again.
func TestGlueScriptKilledAfterCommit(t *testing.T) {
	w := newGlueWorld(t, local)
	next := w.land(t, "mon", 2, 1)
	r := w.glue(t, nil, w.args("job-bookmark-enable", "commit")...)
	if r.code == 0 || !strings.Contains(r.stderr, "after job.commit() published run") || strings.Contains(r.stderr, "nothing it wrote was published") {
		t.Errorf("killed after its commit: got %v, want a non-zero exit saying the run was published", r)
	}
	wantIDs(t, w.ids(t), next, "after the kill")
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("the run after the kill: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after the next run")
}

// TestGlueScriptTwoAtOnce: a second run of the job while one holds its
// lease is refused at job.init with exit 3, naming the holder; the first
// finishes and publishes once.
func TestGlueScriptTwoAtOnce(t *testing.T) {
	w := newGlueWorld(t, local)
	next := w.land(t, "mon", 2, 1)
	p, _ := w.startGlue(t, "INITED", w.args("job-bookmark-enable", "init")...)
	second := w.glue(t, nil, w.args("job-bookmark-enable", "none")...)
	if second.code != 3 || !strings.Contains(second.stderr, "is being run by") {
		t.Errorf("the second run: got %v, want exit 3 naming the holder", second)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("the run after: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after the refused run")
}

// TestGlueScriptOnSparkConnect: the same script under Spark Connect
// (SPARK_REMOTE, the shared server), started as Glue's generated scripts
// start (sc = SparkContext()): the constructor gets the launcher's
// stand-in, no local Spark starts (SPARK_HOME is an empty folder), and the
// runs read only what is new.
func TestGlueScriptOnSparkConnect(t *testing.T) {
	remote := os.Getenv("TIDEMARK_TEST_SPARK")
	if remote == "" {
		gluePython(t) // fails (or skips) as every pyspark test does
		t.Fatal("TIDEMARK_TEST_SPARK is not set: run the tests through scripts/test.sh, which starts a Spark Connect server")
	}
	w := newGlueWorld(t, local)
	script := strings.Replace(glueScript, "sc = SparkContext.getOrCreate()", "sc = SparkContext()", 1)
	if err := os.WriteFile(filepath.Join(w.dir, "script.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "SPARK_REMOTE="+remote)
	w.env = append(w.env, noSpark(t)...)
	next := w.land(t, "mon", 2, 1)
	if r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...); r.code != 0 {
		t.Fatalf("Monday on Spark Connect: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after Monday on Spark Connect")
	next = w.land(t, "tue", 1, next)
	r := w.glue(t, nil, w.args("job-bookmark-enable", "none")...)
	if r.code != 0 {
		t.Fatalf("Tuesday on Spark Connect: %v", r)
	}
	wantIDs(t, w.ids(t), next, "after Tuesday on Spark Connect")
	if runs := w.runs(t); runs[0]["sources"].(map[string]any)["orders_source"].(map[string]any)["files"] != float64(1) {
		t.Errorf("Tuesday's run read %v, want the 1 new file", runs[0]["sources"])
	}
}

// TestGluePipInstalled: the awsglue package installed with pip from the
// repository, and the script started with plain python: awsglue starts
// `tidemark glue serve` itself (TIDEMARK_BIN), and the bookmark holds.
func TestGluePipInstalled(t *testing.T) {
	w := newGlueWorld(t, local)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	site := t.TempDir()
	pip := exec.Command(w.python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
		"--no-deps", "--target", site, filepath.Join(root, "glue", "python"))
	if out, err := pip.CombinedOutput(); err != nil {
		t.Fatalf("pip install ./glue/python: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(site, "awsglue", "context.py")); err != nil {
		t.Fatalf("pip did not install awsglue: %v", err)
	}
	next := w.land(t, "mon", 2, 1)
	for day := 0; day < 2; day++ {
		ctx, cancel := context.WithTimeout(context.Background(), glueTimeout)
		cmd := exec.CommandContext(ctx, w.python, append([]string{"script.py"}, w.args("job-bookmark-enable", "none")...)...)
		cmd.Dir = w.dir
		cmd.Env = baseEnv("PYTHONPATH="+site, "TIDEMARK_BIN="+tidemarkBin)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("python script.py (day %d): %v\n%s", day+1, err, out)
		}
		if day == 0 {
			next = w.land(t, "tue", 1, next)
		}
	}
	wantIDs(t, w.ids(t), next, "after two days with the pip-installed package")
	runs := w.runs(t)
	if len(runs) != 2 || runs[0]["sources"].(map[string]any)["orders_source"].(map[string]any)["files"] != float64(1) {
		t.Errorf("runs: %v, want two runs, the second reading the 1 new file", runs)
	}
}

// TestGlueArticleScript: the article's script, verbatim (the example's
// examples/glue/etl.py), over three days of sales files on S3 after a
// crawl registered sales_db.orders_raw: Monday 10 files, Tuesday 5, then nothing. Each
// run's output, read back with DuckDB, holds exactly the cumulative
// orders; the third run writes nothing; runs and bookmark show show the
// script's runs and its orders_source ctx. It uses the article's own
// buckets, on a versitygw of its own.
func TestGlueArticleScript(t *testing.T) {
	python := gluePython(t)
	srv, err := s3test.Launch(s3test.RequireBinary(t), t.TempDir())
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(srv.Close)
	srv.CreateBucket(t, "your-input-bucket")
	srv.CreateBucket(t, "your-output-bucket")
	env := &s3Env{srv: srv, client: s3Client(srv.Endpoint, srv.AccessKey, srv.SecretKey, srv.Region)}
	dir := t.TempDir()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, "examples", "glue", "etl.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etl.py"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	crawler := "crawler: sales-crawler\ndatabase: sales_db\ntargets:\n  - path: s3://your-input-bucket/sales/\n    table: orders_raw\n"
	if err := os.WriteFile(filepath.Join(dir, "sales-crawler.yaml"), []byte(crawler), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &glueWorld{dir: dir, python: python, env: env.env(),
		in:  &s3Place{srv: env, bucket: "your-input-bucket", prefix: "sales/"},
		out: &s3Place{srv: env, bucket: "your-output-bucket", prefix: "sales/"}}
	crawl := func() {
		t.Helper()
		if r := tidemark(t, dir, w.env, "crawl", "sales-crawler.yaml", "--json"); r.code != 0 || !strings.Contains(r.stdout, "orders_raw") {
			t.Fatalf("crawl: %v", r)
		}
	}
	run := func(day string, env ...string) {
		t.Helper()
		crawl() // as a daily schedule would; the table has no partitions, so it changes nothing
		ctx, cancel := context.WithTimeout(context.Background(), glueTimeout)
		defer cancel()
		args := []string{"glue", "run", "--python", python, "etl.py", "--JOB_NAME", "sales-etl", "--job-bookmark-option", "job-bookmark-enable"}
		cmd, stdout, stderr := command(ctx, dir, append(append([]string{}, w.env...), env...), args...)
		if r := finish(t, ctx, args, time.Now(), cmd.Run(), stdout, stderr); r.code != 0 {
			t.Fatalf("%s: %v", day, r)
		}
	}
	next := w.landAs(t, "orders-monday-%02d.csv", 10, 1)
	crawl()
	show := tidemark(t, dir, w.env, "catalog", "show", "sales_db.orders_raw", "--json")
	if show.code != 0 {
		t.Fatalf("the crawl did not register sales_db.orders_raw: %v", show)
	}
	run("Monday")
	wantIDs(t, w.ids(t), next, "after Monday")
	next = w.landAs(t, "orders-tuesday-%02d.csv", 5, next)
	run("Tuesday")
	wantIDs(t, w.ids(t), next, "after Tuesday")
	run("Wednesday", noSpark(t)...) // nothing new: no Spark started
	wantIDs(t, w.ids(t), next, "after Wednesday (nothing new)")

	state := filepath.Join(dir, ".tidemark", "state.db")
	r := tidemark(t, dir, w.env, "runs", "sales-etl", "--state", state, "--json")
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 3 {
		t.Fatalf("runs: got %v (%v), want 3 runs\n%v", len(runs), err, r)
	}
	for i, want := range []float64{0, 5, 10} {
		src := runs[i]["sources"].(map[string]any)["orders_source"].(map[string]any)
		if src["files"] != want {
			t.Errorf("run %d read %v files, want %v", 3-i, src["files"], want)
		}
	}
	if snk, _ := runs[0]["sinks"].(map[string]any)["orders_sink"].(map[string]any); snk != nil && snk["files"] != nil && snk["files"] != float64(0) {
		t.Errorf("the third run wrote %v, want nothing", snk)
	}
	bm := tidemark(t, dir, w.env, "bookmark", "show", "sales-etl", "--state", state, "--json")
	if bm.code != 0 || !strings.Contains(bm.stdout, "orders_source") {
		t.Errorf("bookmark show: %v, want the orders_source ctx", bm)
	}
}
