package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchConvert measures CSV -> Parquet throughput: `tidemark run` with a
// fresh state against DuckDB alone running one COPY over the same files.
func benchConvert(ctx context.Context, c *config) section {
	s := section{Title: "1. CSV → Parquet throughput"}
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	if err != nil {
		s.Body.p("Could not generate the input: " + err.Error())
		s.Summary = []summaryRow{{"CSV → Parquet throughput", "—", "—", "—", "—", "not measured"}}
		return s
	}
	if err := warm(ds.Files); err != nil {
		logf("warming the page cache: %v", err)
	}
	list := filepath.Join(c.work, name+".list")
	if err := writeList(list, ds.Files); err != nil {
		s.Body.p("Could not write the file list: " + err.Error())
		return s
	}

	type sample struct {
		m         measured
		err       error
		outFiles  int
		outRows   int64
		outBytes  int64
		reported  int64 // rows the process said it wrote
		verifyErr error
	}
	var tms, dks []sample
	var baselineSQL string
	jobYAML := jobFile{Name: "bench-convert", Source: ds.Dir, Sink: filepath.Join(c.work, "convert-tidemark-N", "out")}.yaml()

	runTidemark := func(rep int) sample {
		dir := filepath.Join(c.work, fmt.Sprintf("convert-tidemark-%d", rep))
		defer os.RemoveAll(dir)
		j := jobFile{Name: "bench-convert", Source: ds.Dir, Sink: filepath.Join(dir, "out")}
		jobPath, err := writeJob(dir, j)
		if err != nil {
			return sample{err: err}
		}
		m, res, err := tidemarkRun(ctx, c, jobPath, "run")
		smp := sample{m: m, err: err, reported: res.Sinks["out"].Rows}
		if err == nil {
			smp.outFiles, smp.outRows, smp.outBytes, smp.verifyErr = outputRows(ctx, c, j.Sink)
		}
		logf("convert rep %d tidemark: %s %s%s", rep+1, secs(m.Wall), m.status(), busyNote(m))
		return smp
	}
	runDuckDB := func(rep int) sample {
		dir := filepath.Join(c.work, fmt.Sprintf("convert-duckdb-%d", rep))
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "out")
		if err := os.MkdirAll(out, 0o755); err != nil {
			return sample{err: err}
		}
		m, rows, sql, err := duckdbCopy(ctx, c, list, filepath.Join(out, "data.parquet"), "")
		baselineSQL = sql
		smp := sample{m: m, err: err, reported: rows}
		if err == nil {
			smp.outFiles, smp.outRows, smp.outBytes, smp.verifyErr = outputRows(ctx, c, out)
		}
		logf("convert rep %d duckdb: %s %s%s", rep+1, secs(m.Wall), m.status(), busyNote(m))
		return smp
	}
	built := c.bin.tidemark != ""
	for rep := range c.Reps {
		// Alternate which goes first, so neither always runs on a machine
		// the other has just warmed or heated.
		if rep%2 == 0 && built {
			tms = append(tms, runTidemark(rep))
		}
		dks = append(dks, runDuckDB(rep))
		if rep%2 == 1 && built {
			tms = append(tms, runTidemark(rep))
		}
		if ctx.Err() != nil {
			break
		}
	}

	okTimes := func(ss []sample) (ts []time.Duration, rss []int64, failed []string) {
		for i, x := range ss {
			if x.err != nil {
				failed = append(failed, fmt.Sprintf("rep %d: %s", i+1, firstLine(x.err.Error())))
				continue
			}
			ts = append(ts, x.m.Wall)
			rss = append(rss, x.m.PeakRSS)
		}
		return
	}
	tmT, tmRSS, tmFail := okTimes(tms)
	dkT, dkRSS, dkFail := okTimes(dks)
	tmMed, dkMed := median(tmT), median(dkT)

	// Correctness: what was written must be every input row, once.
	for i, x := range tms {
		if x.err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, tidemark rep %d failed: %s", i+1, describeErr(x.m, x.err)))
			continue
		}
		if x.verifyErr != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, tidemark rep %d: %v", i+1, x.verifyErr))
		} else if x.outRows != ds.Rows || x.reported != ds.Rows {
			s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, tidemark rep %d: input has %d rows; the sink folder holds %d and run --json reported %d",
				i+1, ds.Rows, x.outRows, x.reported))
		}
	}
	for i, x := range dks {
		if x.err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("CSV → Parquet, DuckDB baseline rep %d failed: %v", i+1, firstLine(x.err.Error())))
		}
	}

	row := summaryRow{Measure: fmt.Sprintf("CSV → Parquet, %d files × %s rows: throughput", c.ConvertFiles, thousands(c.ConvertRows)),
		Target: fmt.Sprintf("≥ %.2f×", c.ConvertTarget)}
	var r float64
	switch {
	case tmMed > 0 && dkMed > 0:
		r = dkMed.Seconds() / tmMed.Seconds()
		row.Tidemark = rowsPerSec(ds.Rows, tmMed)
		row.Baseline = rowsPerSec(ds.Rows, dkMed) + " (DuckDB alone)"
		row.Ratio = ratio(r)
		row.Result = passFail(r >= c.ConvertTarget)
	case tmMed == 0:
		row.Tidemark, row.Baseline, row.Ratio, row.Result = "failed", rowsPerSec(ds.Rows, dkMed), "—", "**FAIL** (tidemark did not complete)"
		if c.bin.tidemark == "" {
			row.Tidemark, row.Result = "not built", "not measured"
		}
	default:
		row.Tidemark, row.Baseline, row.Ratio, row.Result = rowsPerSec(ds.Rows, tmMed), "failed", "—", "not measured"
	}
	s.Summary = []summaryRow{row}

	b := &s.Body
	b.p(fmt.Sprintf("Input: %d CSV files of %s rows each (%s rows, %s; columns `order_id BIGINT, customer_id BIGINT, "+
		"product VARCHAR, amount BIGINT, ts TIMESTAMP`), on local disk, generated once into `%s`.",
		len(ds.Files), thousands(c.ConvertRows), thousands(ds.Rows), mb(ds.Bytes), c.rel(ds.Dir)))
	b.p("**tidemark**: `tidemark run job.yaml --json` with a fresh state and an empty sink folder each repetition; the job:")
	b.code("yaml", c.show(jobYAML))
	b.p("**DuckDB alone**: `bench/duckdbcopy`, a separate Go process that opens DuckDB in memory through the same " +
		"driver and runs one statement (DuckDB's defaults: all cores, snappy Parquet):")
	b.code("sql", c.show(baselineSQL))
	b.p(fmt.Sprintf("Median of %d repetitions, alternating which side runs first. Throughput is input rows, and input "+
		"CSV megabytes (10^6 bytes), per second of wall time.", c.Reps))

	tableRows := [][]string{}
	add := func(label string, ts []time.Duration, rss []int64, ss []sample, failed []string) {
		if len(ts) == 0 {
			why := strings.Join(failed, "; ")
			if len(ss) == 0 {
				why = "not run"
			}
			tableRows = append(tableRows, []string{label, "—", "—", "—", "—", "—", "—", why})
			return
		}
		med := median(ts)
		var outB int64
		var outF int
		for _, x := range ss {
			if x.err == nil {
				outB, outF = x.outBytes, x.outFiles
			}
		}
		var each []string
		for _, x := range ss {
			if x.err != nil {
				each = append(each, x.m.status())
			} else {
				each = append(each, secs(x.m.Wall)+busyNote(x.m))
			}
		}
		tableRows = append(tableRows, []string{label, secs(med), rowsPerSec(ds.Rows, med), mbPerSec(ds.Bytes, med),
			mb(medianInt(rss)), fmt.Sprintf("%d files, %s", outF, mb(outB)), strings.Join(each, ", "), strings.Join(failed, "; ")})
	}
	add("tidemark", tmT, tmRSS, tms, tmFail)
	add("DuckDB alone", dkT, dkRSS, dks, dkFail)
	b.table([]string{"", "median time", "rows/s", "MB/s", "peak RSS", "output", "each repetition", "failures"}, tableRows)
	if r > 0 {
		b.p(fmt.Sprintf("Ratio tidemark/DuckDB throughput: **%s** (target ≥ %.2f×): %s.", ratio(r), c.ConvertTarget, passFail(r >= c.ConvertTarget)))
	}
	return s
}

// describeErr is a one-line account of a failed process, with the end of its
// stderr.
func describeErr(m measured, err error) string {
	if m.TimedOut {
		return fmt.Sprintf("did not finish within the cap (killed after %s)", secs(m.Wall))
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " / ")
	return truncate(msg, 600)
}
