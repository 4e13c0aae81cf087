package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchMemory measures the peak RSS of converting a large CSV input under the
// engine's memory_limit, for tidemark and for DuckDB alone with the same
// limit.
func benchMemory(ctx context.Context, c *config) section {
	s := section{Title: "3. Peak memory under memory_limit"}
	b := &s.Body
	name := fmt.Sprintf("memory-%dx%d", c.MemFiles, c.MemFileBytes)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.MemFiles, 0, c.MemFileBytes)
	row := summaryRow{Measure: fmt.Sprintf("Peak RSS converting %s of CSV, memory_limit: %s", mb(int64(c.MemFiles)*c.MemFileBytes), c.MemLimit),
		Baseline: "—", Ratio: "—", Target: "< " + mb(c.MemTarget), Result: "not measured"}
	if err != nil {
		b.p("Could not generate the input: " + err.Error())
		row.Tidemark = "—"
		s.Summary = []summaryRow{row}
		return s
	}
	list := filepath.Join(c.work, name+".list")
	if err := writeList(list, ds.Files); err != nil {
		b.p(err.Error())
		return s
	}

	// Each sample's Err also covers a run that exited 0 but did not succeed.
	var tms, dks []measured
	var baselineSQL string
	jobYAML := jobFile{Name: "bench-memory", Source: ds.Dir, Sink: filepath.Join(c.work, "memory-tidemark-N", "out"), MemoryLimit: c.MemLimit}.yaml()
	runTidemark := func(rep int) {
		dir := filepath.Join(c.work, fmt.Sprintf("memory-tidemark-%d", rep))
		defer os.RemoveAll(dir)
		j := jobFile{Name: "bench-memory", Source: ds.Dir, Sink: filepath.Join(dir, "out"), MemoryLimit: c.MemLimit}
		jobPath, err := writeJob(dir, j)
		if err != nil {
			tms = append(tms, measured{Err: err})
			return
		}
		m, res, err := tidemarkRun(ctx, c, jobPath, "run")
		if err == nil {
			if res.Sinks["out"].Rows != ds.Rows {
				s.Problems = append(s.Problems, fmt.Sprintf("memory scenario: input has %s rows, run --json reported %s written",
					thousands(ds.Rows), thousands(res.Sinks["out"].Rows)))
			}
			s.Problems = append(s.Problems, checkOutput(ctx, c, "memory scenario, tidemark", j.Sink, ds.Rows)...)
		} else {
			s.Problems = append(s.Problems, fmt.Sprintf("memory scenario: tidemark run %d failed: %s", rep+1, describeErr(m, err)))
		}
		logf("memory rep %d tidemark: %s, peak RSS %s, %s", rep+1, secs(m.Wall), mb(m.PeakRSS), m.status())
		m.Err = err
		tms = append(tms, m)
	}
	runDuckDB := func(rep int) {
		dir := filepath.Join(c.work, fmt.Sprintf("memory-duckdb-%d", rep))
		defer os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			dks = append(dks, measured{Err: err})
			return
		}
		m, _, sql, err := duckdbCopy(ctx, c, list, filepath.Join(dir, "data.parquet"), c.MemLimit)
		baselineSQL = sql
		logf("memory rep %d duckdb: %s, peak RSS %s, %s", rep+1, secs(m.Wall), mb(m.PeakRSS), m.status())
		m.Err = err
		dks = append(dks, m)
	}
	if c.bin.tidemark != "" {
		if err := warm(ds.Files); err != nil {
			logf("warming the page cache: %v", err)
		}
	}
	for rep := range c.MemReps {
		if rep%2 == 0 {
			if c.bin.tidemark != "" {
				runTidemark(rep)
			}
			runDuckDB(rep)
		} else {
			runDuckDB(rep)
			if c.bin.tidemark != "" {
				runTidemark(rep)
			}
		}
	}

	stats := func(ms []measured) (peak int64, walls []string, ok bool) {
		for _, m := range ms {
			if m.Err != nil {
				walls = append(walls, m.status())
				continue
			}
			ok = true
			peak = max(peak, m.PeakRSS)
			walls = append(walls, secs(m.Wall)+busyNote(m))
		}
		return
	}
	tmPeak, tmWalls, tmOK := stats(tms)
	dkPeak, dkWalls, dkOK := stats(dks)
	switch {
	case tmOK:
		row.Tidemark = mb(tmPeak)
		row.Result = passFail(tmPeak < c.MemTarget)
	case c.bin.tidemark == "":
		row.Tidemark = "not built"
	default:
		row.Tidemark = "failed"
		row.Result = "**FAIL** (tidemark did not complete)"
	}
	if dkOK {
		row.Baseline = mb(dkPeak) + " (DuckDB alone, same limit)"
	}
	if tmOK && dkOK {
		row.Ratio = ratio(float64(tmPeak) / float64(dkPeak))
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: %d CSV files of about %s each (%s rows, %s in all), same columns as scenario 1, cached in `%s`. "+
		"tidemark runs this job (fresh state):", len(ds.Files), mb(c.MemFileBytes), thousands(ds.Rows), mb(ds.Bytes), c.rel(ds.Dir)))
	b.code("yaml", c.show(jobYAML))
	b.p("DuckDB alone runs the same conversion with the same limit:")
	b.code("sql", c.show(baselineSQL))
	b.p(fmt.Sprintf("Peak RSS is the process's `ru_maxrss` (the high-water mark of resident memory, as `/usr/bin/time -v` "+
		"reports it), the largest over %d repetition(s). The target is on tidemark's own peak; the ratio to DuckDB "+
		"alone shows what tidemark adds on top of the engine.", c.MemReps))
	b.table([]string{"", "peak RSS", "time", "throughput", "target", "result"}, [][]string{
		{"tidemark", row.Tidemark, strings.Join(tmWalls, ", "), throughputOf(ds, tms), row.Target, row.Result},
		{"DuckDB alone", strings.TrimSuffix(row.Baseline, " (DuckDB alone, same limit)"), strings.Join(dkWalls, ", "), throughputOf(ds, dks), "—", "—"},
	})
	return s
}

// throughputOf is the throughput of the fastest successful sample.
func throughputOf(ds dataset, ms []measured) string {
	var best time.Duration
	for _, m := range ms {
		if m.Err == nil && (best == 0 || m.Wall < best) {
			best = m.Wall
		}
	}
	if best == 0 {
		return "—"
	}
	return rowsPerSec(ds.Rows, best) + ", " + mbPerSec(ds.Bytes, best)
}
