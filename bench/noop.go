package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// findCommand is the no-op baseline: list, stat and sort the folder.
const findCommand = `find "$1" -type f -printf '%P %s %T@\n' | LC_ALL=C sort >/dev/null`

// benchNoop measures a run over many already-processed files: the first run
// that processes them, no-op runs against `find | sort`, runs with a few new
// files, and the state store's size.
func benchNoop(ctx context.Context, c *config) section {
	s := section{Title: "2. No-op run over many processed files, and the state store's size"}
	b := &s.Body
	nFiles := c.NoopDirs * c.NoopPerDir
	label := thousands(int64(nFiles))
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = append(s.Summary, summaryRow{fmt.Sprintf("No-op run over %s processed files", label), "—", "—", "—",
			fmt.Sprintf("≤ %.1f×", c.NoopTarget), "not measured"})
		return s
	}

	base := filepath.Join(c.work, "noop")
	input := filepath.Join(base, "input")
	logf("noop: writing %s tiny files in %d folders", label, c.NoopDirs)
	genStart := time.Now()
	tr, err := genTree(input, c.NoopDirs, c.NoopPerDir)
	if err != nil {
		return notMeasured("Could not generate the input: " + err.Error())
	}
	genTime := time.Since(genStart)
	b.p(fmt.Sprintf("Input: %s tiny CSV files (a header and 2 rows each, %s in all) in %d folders of %s, "+
		"written afresh into the scratch folder for each benchmark run (in %s), because the scenario adds files to it. "+
		"The job, like scenario 1's, has its state in the default SQLite store `.tidemark/state.db` next to the job file:",
		label, mb(tr.Bytes), c.NoopDirs, thousands(int64(c.NoopPerDir)), secs(genTime)))
	jobDir := filepath.Join(base, "job")
	j := jobFile{Name: "bench-noop", Source: input, Sink: filepath.Join(base, "out")}
	b.code("yaml", j.yaml())
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}

	// The first run: every file is new, read in one run.
	jobPath, err := writeJob(jobDir, j)
	if err != nil {
		return notMeasured(err.Error())
	}
	logf("noop: first run over %s files (cap %s)", label, c.Timeout)
	first, firstRes, firstErr := tidemarkRun(ctx, c, jobPath, "first")
	logf("noop: first run: %s %s", secs(first.Wall), first.status())
	firstRow := summaryRow{Measure: fmt.Sprintf("First run: %s new files in one run", label), Baseline: "—", Ratio: "—", Target: "report"}
	b.h3("First run")
	var firstLines [][]string
	if firstErr == nil {
		src := firstRes.Sources["orders"]
		firstRow.Tidemark = secs(first.Wall)
		firstRow.Result = "done"
		firstLines = append(firstLines, []string{"one run, all files", secs(first.Wall), fmt.Sprintf("%s files, %s rows", thousands(src.Files), thousands(src.Rows)), mb(first.PeakRSS), "ok"})
		s.Problems = append(s.Problems, checkOutput(ctx, c, "no-op scenario, first run", j.Sink, tr.Rows)...)
		if src.Files != int64(nFiles) {
			s.Problems = append(s.Problems, fmt.Sprintf("first run over %s files reported reading %d files", label, src.Files))
		}
	} else {
		firstRow.Tidemark = first.status()
		firstRow.Result = "**did not finish**"
		if !first.TimedOut {
			firstRow.Result = "**failed**"
		}
		firstLines = append(firstLines, []string{"one run, all files", secs(first.Wall), "—", mb(first.PeakRSS), describeErr(first, firstErr)})
		s.Problems = append(s.Problems, fmt.Sprintf("The first run over %s new files (one `tidemark run`): %s",
			label, describeErr(first, firstErr)))
	}
	state := stateSize(jobDir)

	// When one run cannot take the backlog, fill the state in bounded runs,
	// so the no-op can still be measured.
	if firstErr != nil && c.BackfillBatch > 0 && ctx.Err() == nil {
		jobDir = filepath.Join(base, "job-bounded")
		j = jobFile{Name: "bench-noop", Source: input, Sink: filepath.Join(base, "out-bounded"), BoundedFiles: c.BackfillBatch}
		if jobPath, err = writeJob(jobDir, j); err != nil {
			return notMeasured(err.Error())
		}
		var total time.Duration
		var done int64
		var peak int64
		var berr error
		runs := 0
		for runs < nFiles/c.BackfillBatch+2 && ctx.Err() == nil {
			m, res, err := tidemarkRun(ctx, c, jobPath, fmt.Sprintf("backfill-%d", runs+1))
			runs++
			total += m.Wall
			peak = max(peak, m.PeakRSS)
			logf("noop: bounded run %d: %s %s, %d files", runs, secs(m.Wall), m.status(), res.Sources["orders"].Files)
			if err != nil {
				berr = fmt.Errorf("bounded run %d: %s", runs, describeErr(m, err))
				break
			}
			n := res.Sources["orders"].Files
			done += n
			if n == 0 || done >= int64(nFiles) {
				break
			}
		}
		status := "ok"
		if berr != nil {
			status = berr.Error()
		} else if done < int64(nFiles) {
			status = fmt.Sprintf("stopped after %d runs with %d of %d files read", runs, done, nFiles)
		}
		firstLines = append(firstLines, []string{fmt.Sprintf("fallback: %d runs with bounded_files: %s", runs, thousands(int64(c.BackfillBatch))),
			secs(total) + " in all", fmt.Sprintf("%s files", thousands(done)), mb(peak), status})
		if berr != nil || done < int64(nFiles) {
			b.table([]string{"", "time", "read", "peak RSS", "status"}, firstLines)
			s.Summary = append(s.Summary, firstRow)
			return notMeasured("The state could not be filled, so the no-op run was not measured.")
		}
		s.Problems = append(s.Problems, checkOutput(ctx, c, "no-op scenario, bounded runs", j.Sink, tr.Rows)...)
		state = stateSize(jobDir)
		firstRow.Result += fmt.Sprintf("; %d bounded runs took %s", runs, secs(total))
	} else if firstErr != nil {
		b.table([]string{"", "time", "read", "peak RSS", "status"}, firstLines)
		s.Summary = append(s.Summary, firstRow)
		return notMeasured("The first run did not complete, so the no-op run was not measured.")
	}
	b.table([]string{"", "time", "read", "peak RSS", "status"}, firstLines)
	s.Summary = append(s.Summary, firstRow)

	// No-op runs against find | sort, alternating, then runs with a few new
	// files. Each step is a whole measurement, so a disturbed one can be
	// taken again (a step with new files adds its own).
	type step struct {
		m     measured
		files int64 // files the run read
	}
	stepM := func(x step) measured { return x.m }
	var noops, finds, news []time.Duration
	var each [][]string
	retaken, runs, added := 0, 0, 0
	tidemarkStep := func() step {
		runs++
		m, res, err := tidemarkRun(ctx, c, jobPath, fmt.Sprintf("run-%d", runs))
		m.Err = err
		return step{m, res.Sources["orders"].Files}
	}
	findStep := func() step {
		return step{m: timeProcess(ctx, runSpec{Name: "sh", Args: []string{"-c", findCommand, "sh", input},
			Timeout: c.Timeout, Settle: c.Settle})}
	}
	newStep := func() step {
		for i := range c.NoopNew {
			d := filepath.Join(input, fmt.Sprintf("d%04d", (i*c.NoopDirs)/max(c.NoopNew, 1)))
			g := newOrderGen(uint64(1000+added), int64(10_000_000+added*10))
			if _, err := writeTiny(filepath.Join(d, fmt.Sprintf("new-%04d.csv", added)), g, nil); err != nil {
				return step{m: measured{Err: err}}
			}
			added++
		}
		return tidemarkStep()
	}
	// measure takes a step (again while disturbed) and records it; wantFiles
	// < 0 marks the baseline, which reads no files.
	measure := func(label string, take func() step, wantFiles int64, into *[]time.Duration) {
		x := retake(ctx, c, "noop: "+label, take, stepM, &retaken)
		logf("noop: %s: %s %s%s", label, secs(x.m.Wall), x.m.status(), busyNote(x.m))
		st, rss := "ok", "—"
		if wantFiles >= 0 {
			rss = mb(x.m.PeakRSS)
		}
		switch {
		case x.m.Err != nil:
			st = describeErr(x.m, x.m.Err)
			s.Problems = append(s.Problems, fmt.Sprintf("%s failed: %s", label, st))
		case wantFiles >= 0 && x.files != wantFiles:
			st = fmt.Sprintf("read %d files, want %d", x.files, wantFiles)
			s.Problems = append(s.Problems, fmt.Sprintf("%s over the processed files read %d files, want %d", label, x.files, wantFiles))
			*into = append(*into, x.m.Wall)
		default:
			*into = append(*into, x.m.Wall)
		}
		each = append(each, []string{label, secs(x.m.Wall) + busyNote(x.m), rss, st})
	}
	for rep := range c.Reps {
		noop := func() { measure(fmt.Sprintf("no-op run %d", rep+1), tidemarkStep, 0, &noops) }
		find := func() { measure(fmt.Sprintf("find | sort %d", rep+1), findStep, -1, &finds) }
		if rep%2 == 0 {
			noop()
			find()
		} else {
			find()
			noop()
		}
	}
	for rep := range c.Reps {
		measure(fmt.Sprintf("run with %d new files %d", c.NoopNew, rep+1), newStep, int64(c.NoopNew), &news)
	}
	s.Problems = append(s.Problems, checkOutput(ctx, c, "no-op scenario, after the runs with new files", j.Sink,
		tr.Rows+int64(added*2))...)
	stateEnd := stateSize(jobDir)

	noopMed, findMed, newMed := median(noops), median(finds), median(news)
	noopRow := summaryRow{Measure: fmt.Sprintf("No-op run over %s processed files", label),
		Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≤ %.1f×", c.NoopTarget), Result: "not measured"}
	if noopMed > 0 {
		noopRow.Tidemark = secs(noopMed)
	} else {
		noopRow.Tidemark = "failed"
	}
	if findMed > 0 {
		noopRow.Baseline = secs(findMed) + " (find | sort)"
	}
	if noopMed > 0 && findMed > 0 {
		r := noopMed.Seconds() / findMed.Seconds()
		noopRow.Ratio = ratio(r)
		noopRow.Result = passFail(r <= c.NoopTarget)
	}
	newRow := summaryRow{Measure: fmt.Sprintf("Run with %d new files among them", c.NoopNew),
		Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≤ %.1f× the no-op", c.NewTarget), Result: "not measured"}
	if newMed > 0 {
		newRow.Tidemark = secs(newMed)
	} else {
		newRow.Tidemark = "failed"
	}
	if noopMed > 0 {
		newRow.Baseline = secs(noopMed) + " (the no-op run)"
	}
	if newMed > 0 && noopMed > 0 {
		r := newMed.Seconds() / noopMed.Seconds()
		newRow.Ratio = ratio(r)
		newRow.Result = passFail(r <= c.NewTarget)
	}
	perFile := func(st stateFiles) string {
		return fmt.Sprintf("%s (%s B/file)", mb(st.total()), thousands(st.total()/int64(nFiles)))
	}
	stateRow := summaryRow{Measure: fmt.Sprintf("State store after %s files (state.db + -wal)", label),
		Tidemark: perFile(state), Baseline: "—", Ratio: "—", Target: "report", Result: "—"}
	s.Summary = append(s.Summary, noopRow, newRow, stateRow)

	b.h3("No-op and incremental runs")
	b.p(fmt.Sprintf("Then %d no-op runs of the same job (nothing new; each must read 0 files) alternate with %d runs of "+
		"the baseline, which lists, stats and sorts the folder:", c.Reps, c.Reps))
	b.code("sh", c.show(strings.ReplaceAll(findCommand, `"$1"`, input)))
	b.p(fmt.Sprintf("Then %d runs each find %d new files (spread over the folders) among the processed ones, and must "+
		"read exactly those.", c.Reps, c.NoopNew))
	b.table([]string{"", "time", "peak RSS", "status"}, each)
	if retaken > 0 {
		b.p(fmt.Sprintf("%d sample(s) disturbed by other processes were thrown away and taken again (not shown).", retaken))
	}
	b.table([]string{"", "median", "ratio", "target", "result"}, [][]string{
		{"no-op run", secs(noopMed), noopRow.Ratio + " of find | sort (" + secs(findMed) + ")", noopRow.Target, noopRow.Result},
		{fmt.Sprintf("run with %d new files", c.NoopNew), secs(newMed), newRow.Ratio + " of the no-op", newRow.Target, newRow.Result},
	})
	b.h3("State store size")
	b.p(fmt.Sprintf("The SQLite state store (`.tidemark/state.db` and its write-ahead log `-wal`; `-shm` is only "+
		"an index and not counted) holding the identities of the %s processed files:", label))
	b.table([]string{"when", "state.db", "-wal", "-shm", "state.db + -wal", "per processed file"}, [][]string{
		{"after the first run", mb(state.DB), mb(state.WAL), mb(state.SHM), mb(state.total()), thousands(state.total()/int64(nFiles)) + " B"},
		{fmt.Sprintf("after all runs (%s files)", thousands(int64(nFiles+added))), mb(stateEnd.DB), mb(stateEnd.WAL), mb(stateEnd.SHM),
			mb(stateEnd.total()), thousands(stateEnd.total()/int64(nFiles+added)) + " B"},
	})
	return s
}

// checkOutput reads a sink folder back with DuckDB and reports a problem when
// it does not hold exactly want rows.
func checkOutput(ctx context.Context, c *config, what, dir string, want int64) []string {
	files, rows, _, err := outputRows(ctx, c, dir)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", what, err)}
	}
	if rows != want {
		return []string{fmt.Sprintf("%s: the sink folder holds %s rows in %d Parquet files, want %s",
			what, thousands(rows), files, thousands(want))}
	}
	return nil
}
