package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// memorySide is one program converting the large input; each sample's Err
// also covers a run that exited 0 but did not succeed.
type memorySide struct {
	label   string
	run     func(rep int) measured
	samples []measured
	retaken int // disturbed samples thrown away
	sql     string
}

// peak is the largest peak RSS over the successful samples.
func (s *memorySide) peak() (peak int64, ok bool) {
	for _, m := range s.samples {
		if m.Err == nil {
			ok = true
			peak = max(peak, m.PeakRSS)
		}
	}
	return peak, ok
}

// benchMemory measures the peak RSS of converting a large CSV input under the
// engine's memory_limit, for tidemark and for DuckDB alone with the same
// limit.
func benchMemory(ctx context.Context, c *config) section {
	s := section{Title: "3. Peak memory under memory_limit"}
	b := &s.Body
	name := fmt.Sprintf("memory-%dx%d", c.MemFiles, c.MemFileBytes)
	row := summaryRow{Measure: fmt.Sprintf("Peak RSS converting %s of CSV, memory_limit: %s", mb(int64(c.MemFiles)*c.MemFileBytes), c.MemLimit),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: "< " + mb(c.MemTarget), Result: "not measured"}
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.MemFiles, 0, c.MemFileBytes)
	if err == nil {
		err = warm(ds.Files)
	}
	list := filepath.Join(c.work, name+".list")
	if err == nil {
		err = writeList(list, ds.Files)
	}
	if err != nil {
		b.p("Could not prepare the input: " + err.Error())
		s.Summary = []summaryRow{row}
		return s
	}

	job := func(dir string) jobFile {
		return jobFile{Name: "bench-memory", Source: ds.Dir, Sink: filepath.Join(dir, "out"), MemoryLimit: c.MemLimit}
	}
	tidemark := &memorySide{label: "tidemark"}
	tidemark.run = func(rep int) measured {
		dir := filepath.Join(c.work, fmt.Sprintf("memory-tidemark-%d", rep))
		defer os.RemoveAll(dir)
		j := job(dir)
		jobPath, err := writeJob(dir, j)
		if err != nil {
			return measured{Err: err}
		}
		m, res, err := tidemarkRun(ctx, c, jobPath, "run")
		m.Err = err
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("memory scenario: tidemark rep %d failed: %s", rep+1, describeErr(m, err)))
			return m
		}
		if res.Sinks["out"].Rows != ds.Rows {
			s.Problems = append(s.Problems, fmt.Sprintf("memory scenario: the input has %s rows; run --json reported %s written",
				thousands(ds.Rows), thousands(res.Sinks["out"].Rows)))
		}
		s.Problems = append(s.Problems, checkOutput(ctx, c, "memory scenario, tidemark", j.Sink, ds.Rows)...)
		return m
	}
	baseline := func(v baselineVariant) *memorySide {
		side := &memorySide{label: v.label}
		side.run = func(rep int) measured {
			dir := filepath.Join(c.work, fmt.Sprintf("memory-%s-%d", v.dir, rep))
			defer os.RemoveAll(dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return measured{Err: err}
			}
			m, _, sql, err := duckdbCopy(ctx, c, v, list, filepath.Join(dir, "data.parquet"), c.MemLimit)
			side.sql = sql
			m.Err = err
			if err != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("memory scenario: %s rep %d failed: %s", v.label, rep+1, describeErr(m, err)))
			}
			return m
		}
		return side
	}
	var bases []*memorySide
	for _, v := range baselines {
		bases = append(bases, baseline(v))
	}
	same := bases[len(bases)-1]
	sides := bases
	if c.bin.tidemark != "" {
		sides = append([]*memorySide{tidemark}, bases...)
	}
	for rep := range c.MemReps {
		for i := range sides {
			side := sides[(i+rep)%len(sides)]
			m := retake(ctx, c, fmt.Sprintf("memory rep %d %s", rep+1, side.label),
				func() measured { return side.run(rep) }, func(m measured) measured { return m }, &side.retaken)
			logf("memory rep %d %s: %s, peak RSS %s, %s%s", rep+1, side.label, secs(m.Wall), mb(m.PeakRSS), m.status(), busyNote(m))
			side.samples = append(side.samples, m)
		}
		if ctx.Err() != nil {
			break
		}
	}

	tmPeak, tmOK := tidemark.peak()
	samePeak, sameOK := same.peak()
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
	if sameOK {
		row.Baseline = mb(samePeak) + " (DuckDB alone, same limit, tidemark's settings, schema given)"
	}
	if tmOK && sameOK {
		row.Ratio = ratio(float64(tmPeak) / float64(samePeak))
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: %d CSV files of about %s each (%s rows, %s in all), same columns as scenario 1, cached in `%s`. "+
		"tidemark runs this job (fresh state):", len(ds.Files), mb(c.MemFileBytes), thousands(ds.Rows), mb(ds.Bytes), c.rel(ds.Dir)))
	b.code("yaml", job(filepath.Join(c.work, "memory-tidemark-N")).yaml())
	b.p("DuckDB alone runs the same conversion under the same limit, the three ways of scenario 1:")
	b.code("sql", sqlOf(bases))
	b.p(fmt.Sprintf("Peak RSS is the process's `ru_maxrss` (the high-water mark of resident memory, as `/usr/bin/time -v` "+
		"reports it), the largest over %d repetition(s). The target is on tidemark's own peak; the ratio to DuckDB "+
		"alone with tidemark's settings and the schema given (the scan tidemark's engine runs) shows what tidemark "+
		"adds on top of the engine.", c.MemReps))
	var rows [][]string
	for _, side := range append([]*memorySide{tidemark}, bases...) {
		peak, ok := side.peak()
		var each []string
		for _, m := range side.samples {
			if m.Err != nil {
				each = append(each, m.status())
			} else {
				each = append(each, secs(m.Wall)+busyNote(m))
			}
		}
		if !ok {
			rows = append(rows, []string{side.label, "—", orDash(strings.Join(each, ", ")), "—", fmt.Sprint(side.retaken)})
			continue
		}
		rows = append(rows, []string{side.label, mb(peak), strings.Join(each, ", "), throughputOf(ds, side.samples), fmt.Sprint(side.retaken)})
	}
	b.table([]string{"", "peak RSS", "time", "throughput (fastest)", "disturbed, retaken"}, rows)
	if tmOK {
		b.p(fmt.Sprintf("tidemark's peak RSS %s, target < %s: %s.", mb(tmPeak), mb(c.MemTarget), row.Result))
	}
	return s
}

func (s *memorySide) statement() string { return s.sql }

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
