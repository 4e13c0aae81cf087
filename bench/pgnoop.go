package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// pgNoop measures, for benchPGState, a no-op run over noop's data set (the
// files made, then processed by a real first run) with the state in
// PostgreSQL and, side by side in the same rounds, in SQLite, each against
// find | sort. It returns the summary rows, PostgreSQL's first.
func pgNoop(ctx context.Context, c *config, b *doc, srv *server, pgState, dir string) (summaryRow, summaryRow, []string) {
	n := c.NoopDirs * c.NoopPerDir
	rows := map[string]*summaryRow{}
	for _, name := range []string{"postgres", "sqlite"} {
		rows[name] = &summaryRow{Measure: fmt.Sprintf("No-op run over %s processed files, state in %s", thousands(int64(n)), storeName[name]),
			Tidemark: "—", Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≤ %.1f×", c.PGStateTarget), Result: "not measured"}
	}
	done := func(why string, problems ...string) (summaryRow, summaryRow, []string) {
		if why != "" {
			b.p(why)
		}
		return *rows["postgres"], *rows["sqlite"], problems
	}
	if c.bin.tidemark == "" {
		return done("The no-op runs were not measured: tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	input := filepath.Join(dir, "input")
	logf("pg-state: writing %s tiny files", thousands(int64(n)))
	if _, err := genTree(input, c.NoopDirs, c.NoopPerDir); err != nil {
		return done("The no-op runs were not measured: generating the input: " + err.Error())
	}
	states := map[string]string{"postgres": pgState, "sqlite": filepath.Join(dir, "noop-sqlite", "state.db")}
	jobs := map[string]string{}
	var firsts [][]string
	for _, name := range []string{"postgres", "sqlite"} {
		j := jobFile{Name: "bench-pg-noop", Source: input, Sink: filepath.Join(dir, "out-"+name)}
		p, err := writeStateJob(filepath.Join(dir, "job-"+name), j, states[name])
		if err != nil {
			return done("The no-op runs were not measured: " + err.Error())
		}
		jobs[name] = p
		logf("pg-state: first run over %s files, state in %s", thousands(int64(n)), name)
		m, res, err := tidemarkRunWith(ctx, c, p, "first", nil, srv.cpu)
		if err == nil && res.Sources["orders"].Files != int64(n) {
			err = fmt.Errorf("read %d files, want %d", res.Sources["orders"].Files, n)
		}
		if err != nil {
			return done(fmt.Sprintf("The no-op runs were not measured: the first run with the state in %s failed: %s", storeName[name], describeErr(m, err)))
		}
		firsts = append(firsts, []string{"first run, state in " + storeName[name], secs(m.Wall), mb(m.PeakRSS), serverCPU(name, m)})
	}
	b.h3(fmt.Sprintf("No-op run over %s processed files", thousands(int64(n))))
	b.p(fmt.Sprintf("Input: scenario 2's data set, %s tiny CSV files in %d folders, processed by a first run through the "+
		"binary with `state: %s` (and again by a job with `state: %s`, for SQLite's side in the same rounds); each no-op "+
		"run then lists every file and merges the listing against the recorded identities. The baseline is `find | sort` "+
		"over the same folder, as in scenario 2; each round takes the three in turn.",
		thousands(int64(n)), c.NoopDirs, store.Redact(pgState), states["sqlite"]))
	b.table([]string{"", "time", "peak RSS", "PostgreSQL CPU"}, firsts)

	var retaken int
	times := map[string][]time.Duration{}
	var each [][]string
	var problems []string
	stepM := func(m measured) measured { return m }
	noop := func(name string, rep int) func() measured {
		return func() measured {
			m, res, err := tidemarkRunWith(ctx, c, jobs[name], fmt.Sprintf("noop-%d", rep), nil, srv.cpu)
			if err == nil && res.Sources["orders"].Files != 0 {
				err = fmt.Errorf("read %d files, want 0", res.Sources["orders"].Files)
			}
			m.Err = err
			return m
		}
	}
	for rep := range c.Reps {
		for _, name := range []string{"postgres", "sqlite"} {
			m := retake(ctx, c, "pg-state: no-op, state in "+name, noop(name, rep+1), stepM, &retaken)
			st := "ok"
			if m.Err != nil {
				st = describeErr(m, m.Err)
				problems = append(problems, fmt.Sprintf("No-op run with the state in %s: %s", storeName[name], st))
			} else {
				times[name] = append(times[name], m.Wall)
			}
			each = append(each, []string{fmt.Sprintf("no-op run %d, state in %s", rep+1, storeName[name]), secs(m.Wall) + busyNote(m),
				mb(m.PeakRSS), serverCPU(name, m), st})
		}
		f := retake(ctx, c, "pg-state: find | sort", func() measured {
			return timeProcess(ctx, runSpec{Name: "sh", Args: []string{"-c", findCommand, "sh", input}, Timeout: c.Timeout, Settle: c.Settle})
		}, stepM, &retaken)
		if f.Err == nil {
			times["find"] = append(times["find"], f.Wall)
		}
		each = append(each, []string{fmt.Sprintf("find | sort %d", rep+1), secs(f.Wall) + busyNote(f), "—", "—", f.status()})
		logf("pg-state: no-op round %d: postgres %s, sqlite %s, find | sort %s", rep+1,
			each[len(each)-3][1], each[len(each)-2][1], secs(f.Wall))
	}
	b.table([]string{"", "time", "peak RSS", "PostgreSQL CPU", "status"}, each)
	if len(times["find"]) == 0 {
		return done("find | sort did not complete, so no ratio is given.", problems...)
	}
	find := median(times["find"])
	var ratios [][]string
	for _, name := range []string{"postgres", "sqlite"} {
		if len(times[name]) == 0 {
			continue
		}
		r := median(times[name]).Seconds() / find.Seconds()
		row := rows[name]
		row.Tidemark, row.Baseline, row.Ratio = secs(median(times[name])), secs(find)+" (find | sort)", ratio(r)
		row.Result = passFail(r <= c.PGStateTarget)
		ratios = append(ratios, []string{"no-op run, state in " + storeName[name], secs(median(times[name])),
			fmt.Sprintf("%s of find | sort (%s)", ratio(r), secs(find)), row.Target, row.Result})
	}
	b.table([]string{"", "median", "ratio", "target", "result"}, ratios)
	if retaken > 0 {
		b.p(fmt.Sprintf("%d sample(s) disturbed by other processes were thrown away and taken again (not shown).", retaken))
	}
	return done("", problems...)
}

// storeName names a state store in the report.
var storeName = map[string]string{"postgres": "PostgreSQL", "sqlite": "SQLite"}

// serverCPU is the PostgreSQL server's CPU time during a run with the
// state in PostgreSQL ("—" for SQLite, which runs in the process).
func serverCPU(store string, m measured) string {
	if store != "postgres" {
		return "—"
	}
	return secs(m.ServerCPU)
}
