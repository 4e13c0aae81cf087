package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// glueConfig is the glue scenario's part of the config.
type glueConfig struct {
	Python       string
	Master       string
	DriverMemory string
	Target       float64
}

// glueFlagsInto registers the glue scenario's flags.
func glueFlagsInto(fs *flag.FlagSet, g *glueConfig) {
	fs.StringVar(&g.Python, "glue-python", os.Getenv("TIDEMARK_TEST_SPARK_PYTHON"), "glue: the Python with pyspark (default $TIDEMARK_TEST_SPARK_PYTHON)")
	fs.StringVar(&g.Master, "glue-master", "local[2]", "glue: Spark master of every script (classic local mode)")
	fs.StringVar(&g.DriverMemory, "glue-driver-memory", "2g", "glue: Spark driver memory of every script")
	fs.Float64Var(&g.Target, "glue-target", 1.2, "glue: maximum time ratio tidemark glue run / the same body as plain PySpark")
}

// glueScript is the article's script (docs/how-to/glue.md) in
// its from_options form, so that the plain PySpark side reads the same
// folder with no catalog in between: the source is the table's folder of
// CSV files (from_catalog plans the same files; e2e/glue_test.go runs the
// script verbatim after a crawl). %s are the input folder and the output.
const glueScript = `import sys

from pyspark.context import SparkContext
from awsglue.context import GlueContext
from awsglue.job import Job
from awsglue.utils import getResolvedOptions

# Retrieve job parameters
args = getResolvedOptions(
    sys.argv,
    ["JOB_NAME"]
)

# Initialize Spark and Glue
sc = SparkContext.getOrCreate()
glue_context = GlueContext(sc)

# Initialize job bookmark state
job = Job(glue_context)
job.init(args["JOB_NAME"], args)

# Read the table's folder of CSV files
source = glue_context.create_dynamic_frame.from_options(
    connection_type="s3",
    connection_options={"paths": [%q], "recurse": True},
    format="csv",
    format_options={"withHeader": True},
    transformation_ctx="orders_source"
)

# Write output
glue_context.write_dynamic_frame.from_options(
    frame=source,
    connection_type="s3",
    connection_options={
        "path": %q
    },
    format="parquet",
    transformation_ctx="orders_sink"
)

# Save bookmark state
job.commit()
`

// plainScript is the same body as plain PySpark, without bookmarks.
const plainScript = `from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
df = spark.read.csv(%q, header=True, inferSchema=True)
df.write.parquet(%q)
`

// startScript is what starting Spark alone costs.
const startScript = `from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.stop()
`

// glueTrace is a sitecustomize that records when the scripts start Spark,
// read, write and call tidemark's bookmark API, into $TMBENCH_GLUE_TRACE
// (one JSON list of [phase, start, end], Unix seconds, at exit). It wraps
// functions the script calls anyway; pyspark is imported a little earlier
// than the script would import it, and the wrappers cost microseconds.
const glueTrace = `import atexit, json, os, time

# Popped, so that the processes the script starts (the JVM, and the Python
# workers Spark starts for Python data) do not write the trace too.
_path = os.environ.pop("TMBENCH_GLUE_TRACE", None)
_events = []
_depth = {}


def _wrap(owner, name, phase, static=False):
    fn = owner.__dict__[name]
    inner = fn.__func__ if isinstance(fn, (classmethod, staticmethod)) else fn

    def wrapped(*a, **kw):
        p = phase(a) if callable(phase) else phase
        _depth[p] = _depth.get(p, 0) + 1
        t0 = time.time()
        try:
            return inner(*a, **kw)
        finally:
            _depth[p] -= 1
            if _depth[p] == 0:
                _events.append([p, t0, time.time()])

    if isinstance(fn, classmethod):
        wrapped = classmethod(wrapped)
    elif isinstance(fn, staticmethod):
        wrapped = staticmethod(wrapped)
    setattr(owner, name, wrapped)


if _path:
    _events.append(["python", time.time(), time.time()])
    from pyspark import context as _ctx
    from pyspark.sql import readwriter as _rw, session as _ss

    _wrap(_ctx.SparkContext, "getOrCreate", "spark start")
    _wrap(_ss.SparkSession.Builder, "getOrCreate", "spark start")
    _wrap(_rw.DataFrameReader, "csv", "read")
    _wrap(_rw.DataFrameReader, "load", "read")
    _wrap(_rw.DataFrameWriter, "parquet", "write")
    _wrap(_ss.SparkSession, "stop", "spark stop")
    try:
        from awsglue import _client as _cl

        _wrap(_cl.Client, "call", lambda a: "api " + a[1])
    except ImportError:
        pass

    @atexit.register
    def _dump():
        _events.append(["exit", time.time(), time.time()])
        with open(_path, "w") as f:
            json.dump(_events, f)
`

// glueSample is one timed script.
type glueSample struct {
	m      measured
	err    error
	phases map[string]time.Duration // by phase of the trace
	first  time.Duration            // process start to the first traced line
	tail   time.Duration            // the script's last traced moment to process exit
	rows   int64                    // output rows read back
}

// glueSide is one of the scripts compared.
type glueSide struct {
	label   string
	run     func(rep int) glueSample
	samples []glueSample
	retaken int
}

func (s *glueSide) ok() []glueSample {
	var out []glueSample
	for _, x := range s.samples {
		if x.err == nil {
			out = append(out, x)
		}
	}
	return out
}

func (s *glueSide) median() time.Duration {
	var ts []time.Duration
	for _, x := range s.ok() {
		ts = append(ts, x.m.Wall)
	}
	return median(ts)
}

// medianPhase is the median of one phase over the side's good samples.
func (s *glueSide) medianPhase(f func(glueSample) time.Duration) time.Duration {
	var ts []time.Duration
	for _, x := range s.ok() {
		ts = append(ts, f(x))
	}
	return median(ts)
}

// benchGlue measures `tidemark glue run` of the article's script against
// the same body as plain PySpark, and its no-op run against Spark's start.
func benchGlue(ctx context.Context, c *config) section {
	s := section{Title: "10. Glue scripts: `tidemark glue run` against plain PySpark"}
	b := &s.Body
	g := c.glue
	measure := fmt.Sprintf("Glue script, CSV → Parquet, %d files × %s rows: time", c.ConvertFiles, thousands(c.ConvertRows))
	noopMeasure := "Glue script, no-op run (nothing new): time"
	target := fmt.Sprintf("≤ %.1f× plain PySpark", g.Target)
	noopTarget := "< Spark's start"
	fail := func(why string) section {
		b.p(why)
		s.Summary = []summaryRow{{measure, "—", "—", "—", target, "not measured"}, {noopMeasure, "—", "—", "—", noopTarget, "not measured"}}
		return s
	}
	if g.Python == "" {
		return fail("Not measured: no Python with pyspark (set -glue-python or TIDEMARK_TEST_SPARK_PYTHON).")
	}
	if c.bin.tidemark == "" {
		return fail("Not measured: tidemark was not built.")
	}
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	if err == nil {
		err = warm(ds.Files)
	}
	traceDir := filepath.Join(c.work, "glue-trace")
	if err == nil {
		err = writeFile(filepath.Join(traceDir, "sitecustomize.py"), glueTrace)
	}
	if err != nil {
		return fail("Could not prepare the input: " + err.Error())
	}
	loadBefore := readTrim("/proc/loadavg")
	sparkArgs := fmt.Sprintf("--master %s --driver-memory %s pyspark-shell", g.Master, g.DriverMemory)
	env := func(trace string) []string {
		return []string{"PYSPARK_SUBMIT_ARGS=" + sparkArgs, "PYTHONPATH=" + traceDir, "TMBENCH_GLUE_TRACE=" + trace,
			"PYSPARK_PYTHON=" + g.Python, "SPARK_LOCAL_IP=127.0.0.1"}
	}
	// script runs one script in dir, traced.
	script := func(dir, logName string, args []string) glueSample {
		trace := filepath.Join(dir, logName+".trace.json")
		m := timeProcess(ctx, runSpec{Name: args[0], Args: args[1:], Dir: dir, Env: env(trace), Timeout: c.Timeout,
			Settle: c.Settle, StderrFile: filepath.Join(dir, logName+".stderr")})
		x := glueSample{m: m, err: m.Err}
		if m.ok() {
			x.phases, x.first, x.tail, x.err = readTrace(trace, m)
		}
		return x
	}

	first := &glueSide{label: "tidemark glue run (first run: every file new)"}
	noop := &glueSide{label: "tidemark glue run (no-op run: nothing new)"}
	plain := &glueSide{label: "plain PySpark, same body, no bookmarks"}
	start := &glueSide{label: "Spark's start (getOrCreate; stop)"}
	glueRun := func(dir, logName string) glueSample {
		x := script(dir, logName, []string{c.bin.tidemark, "glue", "run", "--python", g.Python, "etl.py",
			"--JOB_NAME", "bench-glue", "--job-bookmark-option", "job-bookmark-enable"})
		if x.err == nil {
			x.rows, x.err = glueOutputRows(ctx, c, filepath.Join(dir, "out"))
		}
		return x
	}
	first.run = func(rep int) glueSample {
		dir := filepath.Join(c.work, fmt.Sprintf("glue-tidemark-%d", rep))
		_ = os.RemoveAll(dir)
		if err := writeFile(filepath.Join(dir, "etl.py"), fmt.Sprintf(glueScript, ds.Dir, filepath.Join(dir, "out"))); err != nil {
			return glueSample{err: err}
		}
		x := glueRun(dir, "first")
		if x.err == nil && x.rows != ds.Rows {
			x.err = fmt.Errorf("the output holds %s rows, want %s", thousands(x.rows), thousands(ds.Rows))
		}
		return x
	}
	noop.run = func(rep int) glueSample {
		dir := filepath.Join(c.work, fmt.Sprintf("glue-tidemark-%d", rep))
		if _, err := os.Stat(filepath.Join(dir, ".tidemark", "state.db")); err != nil {
			return glueSample{err: fmt.Errorf("no first run to follow: %w", err)}
		}
		x := glueRun(dir, "noop")
		if x.err == nil && x.rows != ds.Rows {
			x.err = fmt.Errorf("after the no-op run the output holds %s rows, want %s (it must write nothing)", thousands(x.rows), thousands(ds.Rows))
		}
		return x
	}
	plain.run = func(rep int) glueSample {
		dir := filepath.Join(c.work, fmt.Sprintf("glue-plain-%d", rep))
		_ = os.RemoveAll(dir)
		defer os.RemoveAll(dir)
		if err := writeFile(filepath.Join(dir, "plain.py"), fmt.Sprintf(plainScript, ds.Dir, filepath.Join(dir, "out"))); err != nil {
			return glueSample{err: err}
		}
		x := script(dir, "plain", []string{g.Python, "plain.py"})
		if x.err == nil {
			if x.rows, x.err = glueOutputRows(ctx, c, filepath.Join(dir, "out")); x.err == nil && x.rows != ds.Rows {
				x.err = fmt.Errorf("the output holds %s rows, want %s", thousands(x.rows), thousands(ds.Rows))
			}
		}
		return x
	}
	start.run = func(rep int) glueSample {
		dir := filepath.Join(c.work, fmt.Sprintf("glue-start-%d", rep))
		_ = os.RemoveAll(dir)
		defer os.RemoveAll(dir)
		if err := writeFile(filepath.Join(dir, "start.py"), startScript); err != nil {
			return glueSample{err: err}
		}
		return script(dir, "start", []string{g.Python, "start.py"})
	}

	// Each repetition runs the first run, then its no-op run (they share a
	// state), then the baselines; the pairs rotate.
	for rep := range c.Reps {
		order := [][]*glueSide{{first, noop}, {plain}, {start}}
		for i := range order {
			for _, side := range order[(i+rep)%len(order)] {
				x := retake(ctx, c, fmt.Sprintf("glue rep %d %s", rep+1, side.label),
					func() glueSample { return side.run(rep) }, func(x glueSample) measured { return x.m }, &side.retaken)
				if x.err != nil && x.m.Err == nil {
					x.m.Err = x.err
				}
				logf("glue rep %d %s: %s %s%s", rep+1, side.label, secs(x.m.Wall), x.m.status(), busyNote(x.m))
				side.samples = append(side.samples, x)
			}
		}
		_ = os.RemoveAll(filepath.Join(c.work, fmt.Sprintf("glue-tidemark-%d", rep)))
		if ctx.Err() != nil {
			break
		}
	}
	sides := []*glueSide{first, noop, plain, start}
	for _, side := range sides {
		for i, x := range side.samples {
			if x.err != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("Glue, %s rep %d failed: %s", side.label, i+1, describeErr(x.m, x.err)))
			}
		}
	}

	row := summaryRow{Measure: measure, Target: target, Ratio: "—", Result: "not measured", Tidemark: "failed", Baseline: "failed"}
	if t := first.median(); t > 0 {
		row.Tidemark = secs(t)
	}
	if t := plain.median(); t > 0 {
		row.Baseline = secs(t) + " (plain PySpark)"
	}
	if t, p := first.median(), plain.median(); t > 0 && p > 0 {
		r := t.Seconds() / p.Seconds()
		row.Ratio, row.Result = ratio(r), passFail(r <= g.Target)
	}
	nrow := summaryRow{Measure: noopMeasure, Target: noopTarget, Ratio: "—", Result: "not measured", Tidemark: "failed", Baseline: "failed"}
	if t := noop.median(); t > 0 {
		nrow.Tidemark = secs(t)
	}
	if t := start.median(); t > 0 {
		nrow.Baseline = secs(t) + " (Spark's start)"
	}
	if t, p := noop.median(), start.median(); t > 0 && p > 0 {
		r := t.Seconds() / p.Seconds()
		nrow.Ratio, nrow.Result = ratio(r), passFail(r < 1)
	}
	s.Summary = []summaryRow{row, nrow}

	b.p(fmt.Sprintf("Measured on %s UTC, %d core(s). Load average (1, 5, 15 min) before: %s; after: %s. "+
		"With a load above the number of cores the machine is shared and loaded, and every time here is longer "+
		"and noisier than on a quiet machine; the ratios are the figures to read.",
		time.Now().UTC().Format("2006-01-02 15:04"), runtime.NumCPU(), loadFields(loadBefore), loadFields(readTrim("/proc/loadavg"))))
	b.p(fmt.Sprintf("Input: the CSV → Parquet scenario's %d files of %s rows (%s rows, %s), on local disk.",
		len(ds.Files), thousands(c.ConvertRows), thousands(ds.Rows), mb(ds.Bytes)))
	b.p("**tidemark**: `tidemark glue run --python PY etl.py --JOB_NAME bench-glue --job-bookmark-option " +
		"job-bookmark-enable` with a fresh state, then the same command again with nothing new (the article's third " +
		"run). `etl.py` is the article's script (docs/how-to/glue.md) in its `from_options` form, so that " +
		"plain PySpark reads the same folder with no catalog in between: the source is the table's folder (from_catalog " +
		"plans the same files; the tests run the script verbatim after a crawl).")
	b.code("python", fmt.Sprintf(glueScript, ds.Dir, filepath.Join(c.work, "glue-tidemark-N", "out")))
	b.p("**Plain PySpark**: the same body without bookmarks, and **Spark's start** alone:")
	b.code("python", fmt.Sprintf(plainScript, ds.Dir, filepath.Join(c.work, "glue-plain-N", "out"))+"\n# ---\n"+startScript)
	b.p(fmt.Sprintf("Every script runs with the same Python (pyspark %s) and the same Spark settings: classic local "+
		"mode, `PYSPARK_SUBMIT_ARGS=%q`. Outputs are read back with DuckDB (not timed): each holds every input row "+
		"once, and the no-op run adds none. Median of %d repetition(s).", pysparkVersion(ctx, g.Python), sparkArgs, c.Reps))

	var rows [][]string
	for _, side := range sides {
		var each []string
		for _, x := range side.samples {
			if x.err != nil {
				each = append(each, x.m.status())
				continue
			}
			each = append(each, secs(x.m.Wall)+busyNote(x.m))
		}
		med := side.median()
		if med == 0 {
			rows = append(rows, []string{side.label, "—", "—", orDash(strings.Join(each, ", ")), fmt.Sprint(side.retaken)})
			continue
		}
		rows = append(rows, []string{side.label, secs(med), mb(medianInt(rssOf(side.ok()))), strings.Join(each, ", "), fmt.Sprint(side.retaken)})
	}
	b.table([]string{"", "median time", "peak RSS (largest process)", "each repetition", "disturbed, retaken"}, rows)

	b.p("Where the time goes: a `sitecustomize` module on the scripts' path (bench/glue.go) records when each script " +
		"starts Spark (`getOrCreate`), reads (the `csv`/`load` call: with no schema given, Spark infers it, reading " +
		"every file once), writes (`parquet`: the conversion) and calls tidemark's bookmark API (`begin`, `source`: " +
		"the plan; `sink`; `commit`: counting the rows of the written Parquet files from their footers, the state " +
		"transaction and the publish). *Start* is from the process's start to Python's first line (for tidemark, " +
		"the binary's start and its API server too); *exit* is from the script's last line to the process's exit " +
		"(Python's and the JVM's shut-down; for tidemark, also its own end). Medians per phase.")
	b.table(append([]string{"phase"}, labels(sides)...), phaseRows(sides))
	return s
}

// phaseRows is the table of the medians of every phase seen, per side.
func phaseRows(sides []*glueSide) [][]string {
	seen := map[string]bool{}
	for _, side := range sides {
		for _, x := range side.ok() {
			for p := range x.phases {
				seen[p] = true
			}
		}
	}
	order := []string{"spark start", "api begin", "api source", "read", "api sink", "write", "api commit", "spark stop"}
	var names []string
	for _, p := range order {
		if seen[p] {
			names = append(names, p)
			delete(seen, p)
		}
	}
	var rest []string
	for p := range seen {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	names = append(names, rest...)
	cell := func(side *glueSide, f func(glueSample) time.Duration) string {
		if len(side.ok()) == 0 {
			return "—"
		}
		return secs(side.medianPhase(f))
	}
	var rows [][]string
	add := func(label string, f func(glueSample) time.Duration) {
		r := []string{label}
		for _, side := range sides {
			r = append(r, cell(side, f))
		}
		rows = append(rows, r)
	}
	add("start (process → Python)", func(x glueSample) time.Duration { return x.first })
	for _, p := range names {
		add(p, func(x glueSample) time.Duration { return x.phases[p] })
	}
	add("other Python (imports, the script's own lines)", func(x glueSample) time.Duration {
		d := x.m.Wall - x.first - x.tail
		for _, v := range x.phases {
			d -= v
		}
		return d
	})
	add("exit (last line → process exit)", func(x glueSample) time.Duration { return x.tail })
	add("**total**", func(x glueSample) time.Duration { return x.m.Wall })
	return rows
}

// loadFields is the three load averages of a /proc/loadavg line.
func loadFields(line string) string {
	f := strings.Fields(line)
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func labels(sides []*glueSide) []string {
	var out []string
	for _, s := range sides {
		out = append(out, s.label)
	}
	return out
}

func rssOf(xs []glueSample) []int64 {
	var out []int64
	for _, x := range xs {
		out = append(out, x.m.PeakRSS)
	}
	return out
}

// readTrace reads a script's trace: the time spent per phase (outermost
// calls only), from the process's start to the first traced moment, and
// from the last one to the process's exit.
func readTrace(path string, m measured) (map[string]time.Duration, time.Duration, time.Duration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("reading the script's trace: %w", err)
	}
	var events [][]any
	if err := json.Unmarshal(data, &events); err != nil {
		return nil, 0, 0, fmt.Errorf("reading the script's trace %s: %w", path, err)
	}
	at := func(v any) time.Time {
		f, _ := v.(float64)
		return time.Unix(0, int64(f*1e9))
	}
	phases := map[string]time.Duration{}
	var firstAt, lastAt time.Time
	for _, e := range events {
		if len(e) != 3 {
			continue
		}
		p, _ := e[0].(string)
		t0, t1 := at(e[1]), at(e[2])
		switch p {
		case "python":
			firstAt = t0
		case "exit":
			lastAt = t1
		default:
			phases[p] += t1.Sub(t0)
		}
	}
	if firstAt.IsZero() || lastAt.IsZero() {
		return nil, 0, 0, fmt.Errorf("the script's trace %s has no start or exit", path)
	}
	end := m.Start.Add(m.Wall)
	return phases, max(0, firstAt.Sub(m.Start)), max(0, end.Sub(lastAt)), nil
}

// glueOutputRows counts the rows of the Parquet files a script wrote into
// dir (none: 0).
func glueOutputRows(ctx context.Context, c *config, dir string) (int64, error) {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return 0, nil
	}
	_, rows, _, err := outputRows(ctx, c, dir)
	return rows, err
}

// pysparkVersion is the Python's pyspark version, for the report.
func pysparkVersion(ctx context.Context, python string) string {
	if v := commandLine(ctx, "", python, "-c", "import pyspark; print(pyspark.__version__)"); v != "" {
		return v
	}
	return "?"
}

func writeFile(name, text string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(text), 0o644)
}
