package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// engineSettings are the DuckDB settings tidemark's engine makes that change
// how a COPY runs (engine/duckdb New): without insertion order DuckDB writes
// Parquet in parallel.
var engineSettings = []string{"preserve_insertion_order=false"}

// baselineVariant is one way of running DuckDB alone.
type baselineVariant struct {
	label string
	dir   string   // scratch folder prefix
	sets  []string // DuckDB settings NAME=VALUE
	// schema reads with the input's columns given (auto_detect=false), as
	// tidemark's engine does once it knows a source's schema, instead of
	// letting DuckDB sniff the files. That is less work than the conversion
	// tidemark does on a first run, where it must infer the schema: such a
	// variant is a reference, not a baseline for the target.
	schema bool
	// format is the input's: csv (the default) or json.
	format string
}

// baselines are the ways DuckDB alone runs the conversion: the plain COPY,
// then with tidemark's settings, then also told the schema. The throughput
// target is checked against the fastest that does the same work (infers the
// schema); memory is compared with the last, whose scan is the one
// tidemark's engine runs.
var baselines = []baselineVariant{
	{label: "DuckDB alone, defaults", dir: "duckdb"},
	{label: "DuckDB alone, tidemark's settings", dir: "duckdb-settings", sets: engineSettings},
	{label: "DuckDB alone, tidemark's settings, schema given (reference)", dir: "duckdb-schema", sets: engineSettings, schema: true},
}

// convertSample is one repetition of one side.
type convertSample struct {
	m        measured
	err      error
	outFiles int
	outRows  int64
	outBytes int64
	reported int64 // rows the process said it wrote
	checkErr error // reading the output back
}

// convertSide is one of the programs compared.
type convertSide struct {
	label   string
	run     func(rep int) convertSample
	samples []convertSample
	retaken int    // disturbed samples thrown away
	sql     string // the baseline's statement, for the report
}

func (s *convertSide) times() (ts []time.Duration, rss []int64) {
	for _, x := range s.samples {
		if x.err == nil {
			ts = append(ts, x.m.Wall)
			rss = append(rss, x.m.PeakRSS)
		}
	}
	return ts, rss
}

// eachRep is how each of the side's repetitions went: its time (marked
// when others' load disturbed it), or its failure.
func (s *convertSide) eachRep() []string {
	var each []string
	for _, x := range s.samples {
		if x.err != nil {
			each = append(each, x.m.status())
			continue
		}
		each = append(each, secs(x.m.Wall)+busyNote(x.m))
	}
	return each
}

// duckdbSide is DuckDB alone (bench/duckdbcopy, variant v) converting the
// files listed in list into one Parquet file under a scratch folder named
// from prefix, its output read back.
func duckdbSide(ctx context.Context, c *config, v baselineVariant, list, prefix string) *convertSide {
	side := &convertSide{label: v.label}
	side.run = func(rep int) convertSample {
		dir := filepath.Join(c.work, fmt.Sprintf("%s-%s-%d", prefix, v.dir, rep))
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "out")
		if err := os.MkdirAll(out, 0o755); err != nil {
			return convertSample{err: err}
		}
		m, rows, sql, err := duckdbCopy(ctx, c, v, list, filepath.Join(out, "data.parquet"), "")
		side.sql = sql
		m.Err = err
		x := convertSample{m: m, err: err, reported: rows}
		if err == nil {
			x.outFiles, x.outRows, x.outBytes, x.checkErr = outputRows(ctx, c, out)
		}
		return x
	}
	return side
}

// tidemarkSide is `tidemark run` (binary bin) of job j with a fresh state
// and its sink in a scratch folder named from prefix, its output read back.
func tidemarkSide(ctx context.Context, c *config, label, bin, prefix string, j jobFile) *convertSide {
	side := &convertSide{label: label}
	side.run = func(rep int) convertSample {
		dir := filepath.Join(c.work, fmt.Sprintf("%s-%d", prefix, rep))
		defer os.RemoveAll(dir)
		j := j
		j.Sink = filepath.Join(dir, "out")
		jobPath, err := writeJob(dir, j)
		if err != nil {
			return convertSample{err: err}
		}
		m, res, err := tidemarkRunAs(ctx, c, bin, jobPath, "run", nil, nil)
		m.Err = err
		x := convertSample{m: m, err: err, reported: res.Sinks["out"].Rows}
		if err == nil {
			x.outFiles, x.outRows, x.outBytes, x.checkErr = outputRows(ctx, c, j.Sink)
		}
		return x
	}
	return side
}

// benchConvert measures CSV -> Parquet throughput: `tidemark run` with a
// fresh state against DuckDB alone running one COPY over the same files.
func benchConvert(ctx context.Context, c *config) section {
	s := section{Title: "1. CSV → Parquet throughput"}
	b := &s.Body
	measure := fmt.Sprintf("CSV → Parquet, %d files × %s rows: throughput", c.ConvertFiles, thousands(c.ConvertRows))
	target := fmt.Sprintf("≥ %.2f× DuckDB alone", c.ConvertTarget)
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	list := filepath.Join(c.work, name+".list")
	if err == nil {
		err = warmAndList(ds, list)
	}
	if err != nil {
		b.p("Could not prepare the input: " + err.Error())
		s.Summary = []summaryRow{{measure, "—", "—", "—", target, "not measured"}}
		return s
	}

	tidemark := tidemarkSide(ctx, c, "tidemark", c.bin.tidemark, "convert-tidemark", jobFile{Name: "bench-convert", Source: ds.Dir})
	var bases, targets []*convertSide
	for _, v := range baselines {
		side := duckdbSide(ctx, c, v, list, "convert")
		bases = append(bases, side)
		if !v.schema {
			targets = append(targets, side)
		}
	}
	sides := bases
	if c.bin.tidemark != "" {
		sides = append([]*convertSide{tidemark}, bases...)
	}
	runRotated(ctx, c, "convert", sides)
	checkConvertSamples(&s, "CSV → Parquet", sides, ds.Rows)

	tmT, _ := tidemark.times()
	tmMed := median(tmT)
	var best time.Duration
	var bestLabel string
	for _, side := range targets {
		ts, _ := side.times()
		if med := median(ts); med > 0 && (best == 0 || med < best) {
			best, bestLabel = med, side.label
		}
	}
	row := summaryRow{Measure: measure, Target: target, Ratio: "—", Result: "not measured"}
	row.Tidemark = rowsPerSec(ds.Rows, tmMed)
	switch {
	case c.bin.tidemark == "":
		row.Tidemark = "not built"
	case tmMed == 0:
		row.Tidemark, row.Result = "failed", "**FAIL** (tidemark did not complete)"
	}
	row.Baseline = "failed"
	if best > 0 {
		row.Baseline = fmt.Sprintf("%s (%s)", rowsPerSec(ds.Rows, best), bestLabel)
	}
	var r float64
	if tmMed > 0 && best > 0 {
		r = best.Seconds() / tmMed.Seconds()
		row.Ratio = ratio(r)
		row.Result = passFail(r >= c.ConvertTarget)
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: %d CSV files of %s rows each (%s rows, %s; columns `order_id BIGINT, customer_id BIGINT, "+
		"product VARCHAR, amount BIGINT, ts TIMESTAMP`), on local disk, generated once into `%s`.",
		len(ds.Files), thousands(c.ConvertRows), thousands(ds.Rows), mb(ds.Bytes), c.rel(ds.Dir)))
	b.p("**tidemark**: `tidemark run job.yaml --json` with a fresh state and an empty sink folder each repetition; the job:")
	b.code("yaml", jobFile{Name: "bench-convert", Source: ds.Dir, Sink: filepath.Join(c.work, "convert-tidemark-N", "out")}.yaml())
	b.p("**DuckDB alone**: `bench/duckdbcopy`, a separate Go process that opens DuckDB in memory through the same " +
		"driver and runs one COPY (all cores, snappy Parquet, one output file, as tidemark's sink writes). It runs " +
		"three ways per repetition: with DuckDB's defaults; with the setting tidemark's engine makes " +
		"(`preserve_insertion_order` off, so DuckDB writes Parquet in parallel); and with that setting and the " +
		"columns given instead of sniffed (`auto_detect=false`), as tidemark's engine reads once it knows the " +
		"source's schema. The last does less work than the conversion measured — each tidemark repetition starts " +
		"from a fresh state, so it must infer the schema, as the first two do — and is shown for reference only: " +
		"the target is checked against the faster of the first two.")
	b.code("sql", sqlOf(bases))
	b.p(fmt.Sprintf("Median of %d repetitions, rotating which side runs first. Throughput is input rows, and input "+
		"CSV megabytes (10^6 bytes), per second of wall time.", c.Reps))

	var rows [][]string
	for _, side := range append([]*convertSide{tidemark}, bases...) {
		ts, rss := side.times()
		each := side.eachRep()
		var out string
		for _, x := range side.samples {
			if x.err == nil {
				out = fmt.Sprintf("%d file(s), %s", x.outFiles, mb(x.outBytes))
			}
		}
		if len(ts) == 0 {
			rows = append(rows, []string{side.label, "—", "—", "—", "—", "—", orDash(strings.Join(each, ", ")), fmt.Sprint(side.retaken)})
			continue
		}
		med := median(ts)
		rows = append(rows, []string{side.label, secs(med), rowsPerSec(ds.Rows, med), mbPerSec(ds.Bytes, med),
			mb(medianInt(rss)), out, strings.Join(each, ", "), fmt.Sprint(side.retaken)})
	}
	b.table([]string{"", "median time", "rows/s", "MB/s", "peak RSS", "output", "each repetition", "disturbed, retaken"}, rows)
	if tmMed > 0 {
		var parts []string
		for _, side := range bases {
			if ts, _ := side.times(); len(ts) > 0 {
				parts = append(parts, fmt.Sprintf("%s against %s", ratio(median(ts).Seconds()/tmMed.Seconds()), side.label))
			}
		}
		if len(parts) > 0 {
			b.p(fmt.Sprintf("Throughput ratio tidemark/DuckDB: %s. Target ≥ %.2f× the faster of the first two: %s.",
				strings.Join(parts, "; "), c.ConvertTarget, row.Result))
		}
	}
	return s
}

// describeErr is a one-line account of a failed process, with the end of its
// stderr.
func describeErr(m measured, err error) string {
	if m.TimedOut {
		return fmt.Sprintf("did not finish within the cap (killed after %s)", secs(m.Wall))
	}
	return truncate(strings.ReplaceAll(err.Error(), "\n", " / "), 600)
}

// sqlOf lists the statements the baselines ran, one a line.
func sqlOf[S interface{ statement() string }](sides []S) string {
	var lines []string
	for _, s := range sides {
		if q := s.statement(); q != "" {
			lines = append(lines, q)
		}
	}
	return strings.Join(lines, "\n")
}

func (s *convertSide) statement() string { return s.sql }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// runRotated runs every side c.Reps times, rotating the order so that no
// side always runs first or right after the same other side.
func runRotated(ctx context.Context, c *config, name string, sides []*convertSide) {
	for rep := range c.Reps {
		for i := range sides {
			side := sides[(i+rep)%len(sides)]
			x := retake(ctx, c, fmt.Sprintf("%s rep %d %s", name, rep+1, side.label),
				func() convertSample { return side.run(rep) }, func(x convertSample) measured { return x.m }, &side.retaken)
			logf("%s rep %d %s: %s %s%s", name, rep+1, side.label, secs(x.m.Wall), x.m.status(), busyNote(x.m))
			side.samples = append(side.samples, x)
		}
		if ctx.Err() != nil {
			break
		}
	}
}

// checkConvertSamples records a problem for every sample that failed or
// did not write every input row exactly once.
func checkConvertSamples(s *section, title string, sides []*convertSide, rows int64) {
	for _, side := range sides {
		for i, x := range side.samples {
			switch {
			case x.err != nil:
				s.Problems = append(s.Problems, fmt.Sprintf("%s, %s rep %d failed: %s", title, side.label, i+1, describeErr(x.m, x.err)))
			case x.checkErr != nil:
				s.Problems = append(s.Problems, fmt.Sprintf("%s, %s rep %d: %v", title, side.label, i+1, x.checkErr))
			case x.outRows != rows || x.reported != rows:
				s.Problems = append(s.Problems, fmt.Sprintf("%s, %s rep %d: the input has %s rows; the output holds %s and the run reported %s",
					title, side.label, i+1, thousands(rows), thousands(x.outRows), thousands(x.reported)))
			}
		}
	}
}

// warmAndList reads a dataset's files once (both sides then start with
// them in the page cache) and writes their list for the baseline's COPY.
func warmAndList(ds dataset, list string) error {
	if err := warm(ds.Files); err != nil {
		return err
	}
	return writeList(list, ds.Files)
}
