package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The spark scenario: tidemark on engine: spark against Spark itself, on
// one Spark Connect server (TMBENCH_SPARK_REMOTE, else TIDEMARK_TEST_SPARK
// as scripts/test.sh sets it; pyspark's Connect client from
// TMBENCH_SPARK_PYTHON, else TIDEMARK_TEST_SPARK_PYTHON):
//
//   - the convert data set (20 × 250k CSV → Parquet) as a first run of
//     tidemark on Spark, as a plain PySpark job (read with header and
//     inferSchema, write Parquet: the same work as a first run, which
//     infers), and as tidemark on DuckDB;
//   - a no-op run and a run with 5 new files against Spark Structured
//     Streaming's file source with trigger availableNow and a checkpoint
//     (each run a fresh process that restarts the query, as a scheduled
//     job does).
func init() {
	scenarios["spark"] = benchSpark
	scenarioNames = append(scenarioNames, "spark")
}

// sparkEnv is the server and python the scenario uses.
func sparkEnv() (remote, python string) {
	remote = firstEnv("TMBENCH_SPARK_REMOTE", "TIDEMARK_TEST_SPARK")
	python = firstEnv("TMBENCH_SPARK_PYTHON", "TIDEMARK_TEST_SPARK_PYTHON")
	return remote, python
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// pysparkConvert is the plain PySpark job: the conversion, nothing else.
const pysparkConvert = `import sys
from pyspark.sql import SparkSession
remote, src, out = sys.argv[1:4]
spark = SparkSession.builder.remote(remote).getOrCreate()
spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
df = spark.read.option("header", "true").option("inferSchema", "true").csv(src)
df.write.mode("error").parquet(out)
spark.stop()
`

// pysparkStream is one scheduled run of a Structured Streaming job over
// the landing folder: restart from the checkpoint, take what is new, stop.
const pysparkStream = `import sys
from pyspark.sql import SparkSession
remote, src, out, ckpt = sys.argv[1:5]
spark = SparkSession.builder.remote(remote).getOrCreate()
schema = "order_id BIGINT, customer_id BIGINT, product STRING, amount BIGINT, ts STRING"
q = (spark.readStream.schema(schema).option("header", "true").csv(src)
     .writeStream.format("parquet").option("checkpointLocation", ckpt)
     .trigger(availableNow=True).start(out))
q.awaitTermination()
spark.stop()
`

// sparkSample is one timed process.
type sparkSample struct {
	m    measured
	err  error
	rows int64 // rows in the output, when checked
}

func benchSpark(ctx context.Context, c *config) section {
	s := section{Title: "Spark: engine: spark vs PySpark and Structured Streaming"}
	b := &s.Body
	remote, python := sparkEnv()
	measure := fmt.Sprintf("CSV → Parquet on Spark, %d files × %s rows", c.ConvertFiles, thousands(c.ConvertRows))
	if remote == "" || python == "" || c.bin.tidemark == "" {
		b.p("Not measured: no Spark Connect server or pyspark (set TMBENCH_SPARK_REMOTE and TMBENCH_SPARK_PYTHON, or run under scripts/test.sh's variables).")
		s.Summary = []summaryRow{{measure, "—", "—", "—", "≤ 1.20× PySpark", "not measured"}}
		return s
	}
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows), c.ConvertFiles, c.ConvertRows, 0)
	if err != nil {
		b.p("Could not prepare the input: " + err.Error())
		return s
	}
	work := filepath.Join(c.work, "spark")
	scripts := map[string]string{"convert.py": pysparkConvert, "stream.py": pysparkStream}
	for name, body := range scripts {
		err := os.MkdirAll(work, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(work, name), []byte(body), 0o644)
		}
		if err != nil {
			b.p("Could not write the PySpark scripts: " + err.Error())
			return s
		}
	}

	// 1. The conversion.
	type side struct {
		label   string
		run     func(rep int) sparkSample
		samples []sparkSample
	}
	tmJob := func(dir, engine string) (string, error) {
		j := jobFile{Name: "bench-spark", Source: ds.Dir, Sink: filepath.Join(dir, "out")}
		y := j.yaml()
		if engine != "" {
			y = strings.Replace(y, "sources:", engine+"\nsources:", 1)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		p := filepath.Join(dir, "job.yaml")
		return p, os.WriteFile(p, []byte(y), 0o644)
	}
	tidemarkSide := func(label, engine string) *side {
		sd := &side{label: label}
		sd.run = func(rep int) sparkSample {
			dir := filepath.Join(work, fmt.Sprintf("%s-%d", strings.ReplaceAll(label, " ", "-"), rep))
			defer os.RemoveAll(dir)
			jp, err := tmJob(dir, engine)
			if err != nil {
				return sparkSample{err: err}
			}
			m, _, err := tidemarkRun(ctx, c, jp, "run")
			x := sparkSample{m: m, err: err}
			if err == nil {
				_, x.rows, _, x.err = outputRows(ctx, c, filepath.Join(dir, "out"))
			}
			return x
		}
		return sd
	}
	pyside := &side{label: "PySpark job, same server"}
	pyside.run = func(rep int) sparkSample {
		dir := filepath.Join(work, fmt.Sprintf("pyspark-%d", rep))
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "out")
		m := timeProcess(ctx, runSpec{Name: python, Args: []string{filepath.Join(work, "convert.py"), remote, "file:" + ds.Dir, "file:" + out},
			Dir: work, Timeout: c.Timeout, StderrFile: filepath.Join(work, fmt.Sprintf("pyspark-%d.stderr", rep))})
		x := sparkSample{m: m, err: m.Err}
		if x.err == nil {
			_, x.rows, _, x.err = outputRows(ctx, c, out)
		}
		return x
	}
	sides := []*side{
		tidemarkSide("tidemark engine: spark", fmt.Sprintf("engine: {spark: {remote: %q}}", remote)),
		pyside,
		tidemarkSide("tidemark engine: duckdb", ""),
	}
	for rep := range c.Reps {
		for i := range sides {
			sd := sides[(i+rep)%len(sides)]
			x := sd.run(rep)
			logf("spark rep %d %s: %s %s", rep+1, sd.label, secs(x.m.Wall), x.m.status())
			if x.err != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("%s rep %d failed: %s", sd.label, rep+1, describeErr(x.m, x.err)))
			} else if x.rows != ds.Rows {
				s.Problems = append(s.Problems, fmt.Sprintf("%s rep %d: the output holds %s rows, want %s", sd.label, rep+1, thousands(x.rows), thousands(ds.Rows)))
			}
			sd.samples = append(sd.samples, x)
		}
	}
	med := func(sd *side) time.Duration {
		var ts []time.Duration
		for _, x := range sd.samples {
			if x.err == nil {
				ts = append(ts, x.m.Wall)
			}
		}
		return median(ts)
	}
	var rows [][]string
	for _, sd := range sides {
		d := med(sd)
		rows = append(rows, []string{sd.label, secs(d), rowsPerSec(ds.Rows, d)})
	}
	b.p(fmt.Sprintf("%s (%s of CSV), a first run each (the schema inferred), median of %d; Spark on local[2] through Spark Connect, every process timed whole.",
		measure, mb(ds.Bytes), c.Reps))
	b.table([]string{"side", "wall", "rows/s"}, rows)
	tm, py, dk := med(sides[0]), med(sides[1]), med(sides[2])
	if tm > 0 && py > 0 {
		r := float64(tm) / float64(py)
		s.Summary = append(s.Summary, summaryRow{measure, secs(tm), "PySpark " + secs(py), ratio(r), "≤ 1.20× PySpark", passFail(r <= 1.2)})
	}
	if tm > 0 && dk > 0 {
		s.Summary = append(s.Summary, summaryRow{measure + " vs DuckDB engine", secs(tm), "DuckDB " + secs(dk), ratio(float64(tm) / float64(dk)), "report", "—"})
	}

	// 2. No-op and 5 new files vs Structured Streaming.
	landing := filepath.Join(work, "landing")
	if err := os.MkdirAll(landing, 0o755); err != nil {
		b.p("no-op: " + err.Error())
		return s
	}
	link := func(i int, name string) error {
		return os.Link(ds.Files[i%len(ds.Files)], filepath.Join(landing, name))
	}
	for i := range ds.Files {
		if err := link(i, fmt.Sprintf("day1-%04d.csv", i)); err != nil {
			b.p("no-op: " + err.Error())
			return s
		}
	}
	tmDir := filepath.Join(work, "incr-tidemark")
	j := jobFile{Name: "bench-spark-incr", Source: landing, Sink: filepath.Join(tmDir, "out")}
	jp, err := tmJob(tmDir, fmt.Sprintf("engine: {spark: {remote: %q}}", remote))
	_ = j
	if err == nil {
		y, _ := os.ReadFile(jp)
		err = os.WriteFile(jp, []byte(strings.Replace(string(y), strconv.Quote(ds.Dir), strconv.Quote(landing), 1)), 0o644)
	}
	stDir := filepath.Join(work, "incr-stream")
	stream := func(name string) sparkSample {
		m := timeProcess(ctx, runSpec{Name: python, Args: []string{filepath.Join(work, "stream.py"), remote, "file:" + landing,
			"file:" + filepath.Join(stDir, "out"), "file:" + filepath.Join(stDir, "checkpoint")},
			Dir: work, Timeout: c.Timeout, StderrFile: filepath.Join(work, name+".stderr")})
		return sparkSample{m: m, err: m.Err}
	}
	tmRun := func(name string) sparkSample {
		m, _, err := tidemarkRun(ctx, c, jp, name)
		return sparkSample{m: m, err: err}
	}
	if err == nil {
		if x := tmRun("first"); x.err != nil {
			err = x.err
		} else if x := stream("stream-first"); x.err != nil {
			err = fmt.Errorf("structured streaming: %w", x.err)
		}
	}
	if err != nil {
		s.Problems = append(s.Problems, "incremental runs: "+err.Error())
		return s
	}
	var noopTM, noopST, newTM, newST []time.Duration
	for rep := range c.Reps {
		for _, x := range []struct {
			into *[]time.Duration
			run  func(string) sparkSample
			name string
		}{{&noopTM, tmRun, "noop"}, {&noopST, stream, "stream-noop"}} {
			y := x.run(fmt.Sprintf("%s-%d", x.name, rep))
			if y.err != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("%s rep %d failed: %s", x.name, rep+1, describeErr(y.m, y.err)))
				continue
			}
			*x.into = append(*x.into, y.m.Wall)
		}
		for k := range 5 {
			_ = link(rep*5+k, fmt.Sprintf("new-%d-%d.csv", rep, k))
		}
		for _, x := range []struct {
			into *[]time.Duration
			run  func(string) sparkSample
			name string
		}{{&newTM, tmRun, "new5"}, {&newST, stream, "stream-new5"}} {
			y := x.run(fmt.Sprintf("%s-%d", x.name, rep))
			if y.err != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("%s rep %d failed: %s", x.name, rep+1, describeErr(y.m, y.err)))
				continue
			}
			*x.into = append(*x.into, y.m.Wall)
		}
	}
	a, bb, cc, dd := median(noopTM), median(noopST), median(newTM), median(newST)
	b.p(fmt.Sprintf("Incremental runs over a landing folder of %d files (%s rows each): a run with nothing new, and a run with 5 new files, "+
		"each a fresh process; Structured Streaming restarts its file-source query from its checkpoint with trigger availableNow.", len(ds.Files), thousands(c.ConvertRows)))
	b.table([]string{"run", "tidemark engine: spark", "Structured Streaming", "ratio"}, [][]string{
		{"nothing new", secs(a), secs(bb), ratioOf(bb, a) + " (streaming / tidemark)"},
		{"5 new files", secs(cc), secs(dd), ratioOf(dd, cc) + " (streaming / tidemark)"},
	})
	if a > 0 && bb > 0 {
		s.Summary = append(s.Summary, summaryRow{"no-op run on Spark", secs(a), "Structured Streaming " + secs(bb), ratio(float64(a) / float64(bb)), "report", "—"})
	}
	if cc > 0 && dd > 0 {
		s.Summary = append(s.Summary, summaryRow{"5-new-files run on Spark", secs(cc), "Structured Streaming " + secs(dd), ratio(float64(cc) / float64(dd)), "report", "—"})
	}
	return s
}

func ratioOf(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return "—"
	}
	return ratio(float64(a) / float64(b))
}
