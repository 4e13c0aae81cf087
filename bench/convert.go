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
// Parquet in parallel. The baseline runs once with DuckDB's defaults and once
// with these, and the target is checked against the faster of the two.
var engineSettings = []string{"preserve_insertion_order=false"}

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

// benchConvert measures CSV -> Parquet throughput: `tidemark run` with a
// fresh state against DuckDB alone running one COPY over the same files.
func benchConvert(ctx context.Context, c *config) section {
	s := section{Title: "1. CSV → Parquet throughput"}
	b := &s.Body
	measure := fmt.Sprintf("CSV → Parquet, %d files × %s rows: throughput", c.ConvertFiles, thousands(c.ConvertRows))
	target := fmt.Sprintf("≥ %.2f× the faster baseline", c.ConvertTarget)
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	if err == nil {
		err = warm(ds.Files)
	}
	list := filepath.Join(c.work, name+".list")
	if err == nil {
		err = writeList(list, ds.Files)
	}
	if err != nil {
		b.p("Could not prepare the input: " + err.Error())
		s.Summary = []summaryRow{{measure, "—", "—", "—", target, "not measured"}}
		return s
	}

	tidemark := &convertSide{label: "tidemark"}
	tidemark.run = func(rep int) convertSample {
		dir := filepath.Join(c.work, fmt.Sprintf("convert-tidemark-%d", rep))
		defer os.RemoveAll(dir)
		j := jobFile{Name: "bench-convert", Source: ds.Dir, Sink: filepath.Join(dir, "out")}
		jobPath, err := writeJob(dir, j)
		if err != nil {
			return convertSample{err: err}
		}
		m, res, err := tidemarkRun(ctx, c, jobPath, "run")
		m.Err = err
		x := convertSample{m: m, err: err, reported: res.Sinks["out"].Rows}
		if err == nil {
			x.outFiles, x.outRows, x.outBytes, x.checkErr = outputRows(ctx, c, j.Sink)
		}
		return x
	}
	baseline := func(label, dirName string, sets []string) *convertSide {
		side := &convertSide{label: label}
		side.run = func(rep int) convertSample {
			dir := filepath.Join(c.work, fmt.Sprintf("%s-%d", dirName, rep))
			defer os.RemoveAll(dir)
			out := filepath.Join(dir, "out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				return convertSample{err: err}
			}
			m, rows, sql, err := duckdbCopy(ctx, c, list, filepath.Join(out, "data.parquet"), "", sets)
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
	defaults := baseline("DuckDB alone, defaults", "convert-duckdb", nil)
	same := baseline("DuckDB alone, tidemark's settings", "convert-duckdb-settings", engineSettings)

	sides := []*convertSide{defaults, same}
	if c.bin.tidemark != "" {
		sides = []*convertSide{tidemark, defaults, same}
	}
	for rep := range c.Reps {
		// Rotate the order, so that no side always runs first or right
		// after the same other side.
		for i := range sides {
			side := sides[(i+rep)%len(sides)]
			x := retake(ctx, c, fmt.Sprintf("convert rep %d %s", rep+1, side.label),
				func() convertSample { return side.run(rep) }, func(x convertSample) measured { return x.m }, &side.retaken)
			logf("convert rep %d %s: %s %s%s", rep+1, side.label, secs(x.m.Wall), x.m.status(), busyNote(x.m))
			side.samples = append(side.samples, x)
		}
		if ctx.Err() != nil {
			break
		}
	}

	// What was written must be every input row, once.
	for _, side := range sides {
		for i, x := range side.samples {
			switch {
			case x.err != nil:
				s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, %s rep %d failed: %s", side.label, i+1, describeErr(x.m, x.err)))
			case x.checkErr != nil:
				s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, %s rep %d: %v", side.label, i+1, x.checkErr))
			case x.outRows != ds.Rows || x.reported != ds.Rows:
				s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, %s rep %d: the input has %s rows; the output holds %s and the process reported %s",
					side.label, i+1, thousands(ds.Rows), thousands(x.outRows), thousands(x.reported)))
			}
		}
	}

	tmT, _ := tidemark.times()
	defT, _ := defaults.times()
	sameT, _ := same.times()
	tmMed, defMed, sameMed := median(tmT), median(defT), median(sameT)
	best, bestLabel := defMed, "defaults"
	if sameMed > 0 && (best == 0 || sameMed < best) {
		best, bestLabel = sameMed, "tidemark's settings"
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
		row.Baseline = fmt.Sprintf("%s (DuckDB alone, %s)", rowsPerSec(ds.Rows, best), bestLabel)
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
		"driver and runs one COPY (all cores, snappy Parquet, one output file, as tidemark's sink writes). It runs twice " +
		"per repetition: with DuckDB's defaults, and with the settings tidemark's engine makes (it turns " +
		"`preserve_insertion_order` off, so DuckDB writes Parquet in parallel). The target is checked against the " +
		"faster of the two.")
	b.code("sql", defaults.sql+"\n"+same.sql)
	b.p(fmt.Sprintf("Median of %d repetitions, rotating which side runs first. Throughput is input rows, and input "+
		"CSV megabytes (10^6 bytes), per second of wall time.", c.Reps))

	var rows [][]string
	for _, side := range []*convertSide{tidemark, defaults, same} {
		ts, rss := side.times()
		var each []string
		var out string
		for _, x := range side.samples {
			if x.err != nil {
				each = append(each, x.m.status())
				continue
			}
			each = append(each, secs(x.m.Wall)+busyNote(x.m))
			out = fmt.Sprintf("%d file(s), %s", x.outFiles, mb(x.outBytes))
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
		if defMed > 0 {
			parts = append(parts, fmt.Sprintf("%s against DuckDB with its defaults", ratio(defMed.Seconds()/tmMed.Seconds())))
		}
		if sameMed > 0 {
			parts = append(parts, fmt.Sprintf("%s against DuckDB with tidemark's settings", ratio(sameMed.Seconds()/tmMed.Seconds())))
		}
		if len(parts) > 0 {
			b.p(fmt.Sprintf("Throughput ratio tidemark/DuckDB: %s. Target ≥ %.2f× the faster: %s.",
				strings.Join(parts, ", "), c.ConvertTarget, row.Result))
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

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
