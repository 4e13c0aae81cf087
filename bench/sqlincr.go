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

// pgTableStats are PostgreSQL's cumulative counters for one table.
type pgTableStats struct {
	SeqScan, SeqRead, IdxScan, IdxFetch, IdxRead int64
}

func (a pgTableStats) minus(b pgTableStats) pgTableStats {
	return pgTableStats{a.SeqScan - b.SeqScan, a.SeqRead - b.SeqRead, a.IdxScan - b.IdxScan, a.IdxFetch - b.IdxFetch, a.IdxRead - b.IdxRead}
}

// rowsRead is what the table's scans read: rows by sequential scans plus
// index entries by index scans (heap fetches are rows of those entries).
func (a pgTableStats) rowsRead() int64 { return a.SeqRead + a.IdxRead }

// incrSample is one incremental run.
type incrSample struct {
	m          measured
	read       int64 // rows the run reported
	stats      pgTableStats
	statements []loggedStatement
}

// defaultRegressionRows is sqltable.DefaultRegressionRows, the depth of
// the regression check when regression_check_rows is not given.
const defaultRegressionRows = 100_000

// benchSQLIncremental measures runs that each find a few new rows in a
// large PostgreSQL table after a first run read it all: their time, and
// the rows PostgreSQL read for them (pg_stat_user_tables and
// pg_stat_user_indexes), with regression_check on (the default) and off.
func benchSQLIncremental(ctx context.Context, c *config) section {
	s := section{Title: "7. Incremental run over a large PostgreSQL table"}
	b := &s.Body
	total, fresh := c.SQLTableRows, c.SQLNewRows
	measure := func(mode string) string {
		return fmt.Sprintf("Incremental run: %s new rows in a %s-row PostgreSQL table, regression_check %s",
			thousands(int64(fresh)), thousands(int64(total)), mode)
	}
	// The limit on rows read: the new rows' share, plus the regression
	// check's region, which is bounded by its depth, not by the table.
	limit := map[string]int64{
		"on":  int64(c.SQLScanFactor*float64(fresh)) + 2*defaultRegressionRows,
		"off": int64(c.SQLScanFactor * float64(fresh)),
	}
	rows := map[string]*summaryRow{
		"on": {Measure: measure("on (default, regression_check_rows 100,000)"), Tidemark: "—", Baseline: "—", Ratio: "—",
			Target: fmt.Sprintf("≤ %.0f rows read per new row + 2 × regression_check_rows (%s; index used)", c.SQLScanFactor, thousands(limit["on"])),
			Result: "not measured"},
		"full": {Measure: measure("on, regression_check_rows: 0 (every row)"), Tidemark: "—", Baseline: "—", Ratio: "—",
			Target: "report (reads every row behind the window)", Result: "not measured"},
		"off": {Measure: measure("off"), Tidemark: "—", Baseline: "—", Ratio: "—",
			Target: fmt.Sprintf("≤ %.0f rows read per new row (%s; index used)", c.SQLScanFactor, thousands(limit["off"])), Result: "not measured"},
	}
	firstRow := summaryRow{Measure: fmt.Sprintf("First run over the %s-row PostgreSQL table (reads all)", thousands(int64(total))),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	summary := func() []summaryRow { return []summaryRow{firstRow, *rows["on"], *rows["full"], *rows["off"]} }
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = summary()
		return s
	}
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	srv, err := c.srv.postgres(ctx)
	if err != nil {
		return notMeasured("Not measured: " + err.Error())
	}
	db, err := createDB(ctx, srv, "tm_bench_incremental")
	if err != nil {
		return notMeasured("Could not create the database: " + err.Error())
	}
	defer db.drop()
	logf("sql-incremental: filling %s rows into %s", thousands(int64(total)), srv.name)
	fillStart := time.Now()
	if err := db.fill(ctx, "bench", total); err != nil {
		return notMeasured("Could not fill the table: " + err.Error())
	}
	fillTime := time.Since(fillStart)

	base := filepath.Join(c.work, "sql-incremental")
	jobDir := filepath.Join(base, "job")
	sink := filepath.Join(base, "out")
	off, every := false, int64(0)
	job := func(mode string) sqlJob {
		j := sqlJob{Name: "bench-sql-incremental", Conn: srv.url(db.name), Table: "bench", Sink: sink}
		switch mode {
		case "off":
			j.RegressionCheck = &off
		case "full":
			j.RegressionRows = &every
		}
		return j
	}
	env := []string{sqlPasswordEnv + "=" + sqlPassword}
	run := func(mode, logName string) (measured, runResult, error) {
		jobPath, err := job(mode).write(jobDir)
		if err != nil {
			return measured{Err: err}, runResult{}, err
		}
		return tidemarkRunWith(ctx, c, jobPath, logName, env, srv.cpu)
	}

	b.p(fmt.Sprintf("%s (`%s`), started by the harness, holds the table of scenario 6 with %s rows (filled in %s, not "+
		"measured; `id` is the primary key and the bookmark key). A first run reads every row; then each incremental "+
		"run finds %s new rows with higher ids, inserted just before it (then `VACUUM (ANALYZE) bench`, as autovacuum "+
		"would, which the harness's server leaves off so that nothing runs behind the measurements). One job and one "+
		"state; the job file is rewritten before each run with the regression check on as by default (the keys left "+
		"out: it counts a region of the 100,000 to 200,000 rows nearest the mark and reads the primary keys of the 500 to "+
		"1,000 nearest), on over every row "+
		"(`regression_check_rows: 0`), or off (`regression_check: false`); these settings are not part of the source's "+
		"fingerprint, so the bookmark carries over. Each setting gets one unmeasured run first (a changed setting "+
		"starts a new baseline), then %d measured runs.", srv.name, srv.version, thousands(int64(total)), secs(fillTime),
		thousands(int64(fresh)), c.Reps))
	b.code("yaml", c.show(strings.ReplaceAll(job("off").yaml(), strconv.Itoa(srv.port), "PORT")))
	b.p("Rows read are the differences of PostgreSQL's counters for the table over the run (read after the run's " +
		"sessions have ended and flushed them): `seq_tup_read` (rows read by sequential scans) plus `idx_tup_read` of its " +
		"indexes (index entries read by index and index-only scans); `idx_tup_fetch` counts the table rows fetched " +
		"through those entries. The statements are those the run sent, from the server's log (`log_statement = 'all'` " +
		"for this database only).")

	logf("sql-incremental: first run over %s rows (cap %s)", thousands(int64(total)), c.Timeout)
	first, firstRes, firstErr := run("on", "first")
	logf("sql-incremental: first run: %s %s", secs(first.Wall), first.status())
	b.h3("First run")
	if firstErr != nil {
		firstRow.Tidemark, firstRow.Result = first.status(), "**failed**"
		s.Problems = append(s.Problems, fmt.Sprintf("The first run over the %s-row PostgreSQL table: %s", thousands(int64(total)), describeErr(first, firstErr)))
		b.table([]string{"", "time", "rows read", "peak RSS", "status"}, [][]string{
			{"first run", secs(first.Wall), "—", mb(first.PeakRSS), describeErr(first, firstErr)}})
		return notMeasured("The first run did not complete, so the incremental runs were not measured.")
	}
	firstRow.Tidemark = fmt.Sprintf("%s (%s)", secs(first.Wall), rowsPerSec(int64(total), first.Wall))
	firstRow.Result = "done"
	b.table([]string{"", "time", "rows read", "throughput", "peak RSS", "server CPU", "status"}, [][]string{
		{"first run", secs(first.Wall), thousands(firstRes.Sources["bench_db"].Rows), rowsPerSec(int64(total), first.Wall),
			mb(first.PeakRSS), secs(first.ServerCPU), "ok"}})
	if got := firstRes.Sources["bench_db"].Rows; got != int64(total) {
		s.Problems = append(s.Problems, fmt.Sprintf("The first run over the %s-row table reported reading %s rows", thousands(int64(total)), thousands(got)))
	}
	s.Problems = append(s.Problems, checkOutput(ctx, c, "incremental scenario, first run", sink, int64(total))...)

	if err := db.exec(ctx, "ALTER DATABASE "+db.name+" SET log_statement = 'all'"); err != nil {
		return notMeasured("Could not turn on the statement log: " + err.Error())
	}
	serverLog := filepath.Join(srv.dir, "server.log")
	next, added := total, 0
	var retaken, n int
	each := [][]string{}
	samples := map[string][]incrSample{}
	modes := []string{"on", "full", "off"}
	take := func(mode string) incrSample {
		n++
		if err := db.exec(ctx, pgInsertSQL("bench", next+1, next+fresh), "VACUUM (ANALYZE) bench"); err != nil {
			return incrSample{m: measured{Err: err}}
		}
		next += fresh
		added += fresh
		time.Sleep(time.Second) // the setup sessions' counters land
		before, err := pgStats(ctx, db)
		if err != nil {
			return incrSample{m: measured{Err: err}}
		}
		offset := fileSize(serverLog)
		m, res, err := run(mode, fmt.Sprintf("run-%d-%s", n, mode))
		m.Err = err
		x := incrSample{m: m, read: res.Sources["bench_db"].Rows}
		time.Sleep(time.Second) // the run's sessions have ended and flushed their counters
		after, serr := pgStats(ctx, db)
		if serr != nil && err == nil {
			x.m.Err = serr
		}
		x.stats = after.minus(before)
		x.statements = statementsSince(serverLog, offset)
		if err == nil && x.read != int64(fresh) {
			x.m.Err = fmt.Errorf("read %d rows, want %d", x.read, fresh)
		}
		return x
	}
	for _, mode := range modes {
		settle := take(mode)
		if settle.m.Err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("Incremental run with regression_check %s, unmeasured first run: %s",
				mode, describeErr(settle.m, settle.m.Err)))
		}
		for rep := range c.Reps {
			x := retake(ctx, c, fmt.Sprintf("sql-incremental rep %d regression_check %s", rep+1, mode),
				func() incrSample { return take(mode) }, func(x incrSample) measured { return x.m }, &retaken)
			logf("sql-incremental rep %d regression_check %s: %s %s%s; rows read %d (seq %d, index %d)", rep+1, mode,
				secs(x.m.Wall), x.m.status(), busyNote(x.m), x.stats.rowsRead(), x.stats.SeqRead, x.stats.IdxRead)
			st := "ok"
			if x.m.Err != nil {
				st = describeErr(x.m, x.m.Err)
				s.Problems = append(s.Problems, fmt.Sprintf("Incremental run with regression_check %s, rep %d: %s", mode, rep+1, st))
			} else {
				samples[mode] = append(samples[mode], x)
			}
			each = append(each, []string{fmt.Sprintf("regression_check %s, run %d", mode, rep+1), secs(x.m.Wall) + busyNote(x.m),
				thousands(x.read), thousands(x.stats.rowsRead()), fmt.Sprintf("%d / %s", x.stats.SeqScan, thousands(x.stats.SeqRead)),
				fmt.Sprintf("%d / %s / %s", x.stats.IdxScan, thousands(x.stats.IdxRead), thousands(x.stats.IdxFetch)),
				secs(x.m.ServerCPU), st})
		}
		if ctx.Err() != nil {
			break
		}
	}
	s.Problems = append(s.Problems, checkOutput(ctx, c, "incremental scenario, after the incremental runs", sink, int64(total+added))...)

	b.h3("Incremental runs")
	b.table([]string{"", "time", "rows delivered", "rows read (table)", "seq scans / rows", "index scans / entries / heap fetches",
		"server CPU", "status"}, each)
	if retaken > 0 {
		b.p(fmt.Sprintf("%d sample(s) disturbed by other processes were thrown away and taken again (not shown).", retaken))
	}
	var med [][]string
	for _, mode := range modes {
		xs := samples[mode]
		row := rows[mode]
		if len(xs) == 0 {
			row.Tidemark, row.Result = "failed", "**FAIL** (no run completed)"
			continue
		}
		var ts []time.Duration
		for _, x := range xs {
			ts = append(ts, x.m.Wall)
		}
		t, r := median(ts), medianInt(readsOf(xs))
		perNew := float64(r) / float64(fresh)
		row.Tidemark = fmt.Sprintf("%s, %s rows read", secs(t), thousands(r))
		row.Ratio = fmt.Sprintf("%.1f rows read / new row", perNew)
		row.Result = "reported"
		lim := "—"
		if l, ok := limit[mode]; ok {
			row.Result = passFail(r <= l)
			lim = thousands(l)
		}
		med = append(med, []string{"regression_check " + mode, secs(t), thousands(r), fmt.Sprintf("%.1f", perNew), lim, row.Result})
	}
	b.table([]string{"", "median time", "median rows read", "per new row", "most rows read", "result"}, med)
	for _, mode := range modes {
		xs := samples[mode]
		if len(xs) == 0 {
			continue
		}
		last := xs[len(xs)-1]
		var lines []string
		for _, st := range last.statements {
			if !readsTable(st.SQL) {
				continue
			}
			line := st.SQL
			if st.Params != "" {
				line += "  -- " + st.Params
			}
			lines = append(lines, line)
		}
		b.p(fmt.Sprintf("The statements on the table that the last run with regression_check %s sent, in order (%d more "+
			"were catalog lookups, pings and transaction control):", mode, len(last.statements)-len(lines)))
		b.code("sql", orDash(strings.Join(lines, "\n")))
	}
	// Rows read out of proportion to the new rows are a finding: name the
	// statement that reads them.
	if xs := samples["on"]; len(xs) > 0 && medianInt(readsOf(xs)) > limit["on"] {
		var counts []string
		for _, st := range xs[len(xs)-1].statements {
			if readsTable(st.SQL) && strings.Contains(st.SQL, "count(*)") && !strings.Contains(st.SQL, " > ") {
				counts = append(counts, "`"+st.SQL+"`")
			}
		}
		s.Problems = append(s.Problems, fmt.Sprintf("With regression_check on (the default), an incremental run that finds %s new "+
			"rows in a %s-row table reads %s rows of it (median), more than its bounded region explains (count statements: %s).",
			thousands(int64(fresh)), thousands(int64(total)), thousands(medianInt(readsOf(xs))), orDash(strings.Join(counts, ", "))))
	}
	s.Summary = summary()
	return s
}

// readsTable tells the statements that read the table bench from catalog
// lookups and the like.
func readsTable(sql string) bool {
	return strings.Contains(sql, `FROM "bench"`) && !strings.Contains(sql, "LIMIT 0")
}

func readsOf(xs []incrSample) []int64 {
	var r []int64
	for _, x := range xs {
		r = append(r, x.stats.rowsRead())
	}
	return r
}

// pgStats reads the table bench's counters.
func pgStats(ctx context.Context, db *database) (pgTableStats, error) {
	out, err := db.srv.query(ctx, db.name, `SELECT t.seq_scan, t.seq_tup_read, coalesce(t.idx_scan, 0), coalesce(t.idx_tup_fetch, 0),
		(SELECT coalesce(sum(i.idx_tup_read), 0) FROM pg_stat_user_indexes i WHERE i.relid = t.relid)
		FROM pg_stat_user_tables t WHERE t.relname = 'bench'`)
	if err != nil {
		return pgTableStats{}, err
	}
	f := strings.Fields(out)
	if len(f) != 5 {
		return pgTableStats{}, fmt.Errorf("reading pg_stat_user_tables: got %q", out)
	}
	var v [5]int64
	for i := range v {
		if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return pgTableStats{}, fmt.Errorf("reading pg_stat_user_tables: %q: %w", out, err)
		}
	}
	return pgTableStats{v[0], v[1], v[2], v[3], v[4]}, nil
}

// loggedStatement is a statement from PostgreSQL's log.
type loggedStatement struct {
	SQL    string
	Params string
}

// statementsSince returns the statements logged after offset by sessions
// other than psql's (the harness's own queries): each log entry starts with
// the server's default prefix and a severity; continuation lines start with
// a tab.
func statementsSince(name string, offset int64) []loggedStatement {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	data := make([]byte, max(0, fileSize(name)-offset))
	n, _ := f.ReadAt(data, offset)
	var entries []string
	for _, line := range strings.Split(string(data[:n]), "\n") {
		if strings.HasPrefix(line, "\t") && len(entries) > 0 {
			entries[len(entries)-1] += " " + strings.TrimSpace(line)
			continue
		}
		entries = append(entries, line)
	}
	// The harness's queries come from psql sessions; their statements are
	// known by what they read.
	ours := func(sql string) bool {
		return strings.Contains(sql, "pg_stat_user_tables") || strings.HasPrefix(sql, "INSERT INTO bench") ||
			strings.HasPrefix(sql, "VACUUM")
	}
	var out []loggedStatement
	skipParams := false
	for _, e := range entries {
		if _, p, ok := strings.Cut(e, "DETAIL:  Parameters: "); ok {
			if !skipParams && len(out) > 0 {
				out[len(out)-1].Params = truncate(p, 200)
			}
			continue
		}
		if _, p, ok := strings.Cut(e, "DETAIL:  parameters: "); ok {
			if !skipParams && len(out) > 0 {
				out[len(out)-1].Params = truncate(p, 200)
			}
			continue
		}
		var sql string
		if _, q, ok := strings.Cut(e, "LOG:  statement: "); ok {
			sql = q
		} else if _, q, ok := strings.Cut(e, "LOG:  execute "); ok {
			_, sql, _ = strings.Cut(q, ": ")
		} else {
			continue
		}
		sql = strings.Join(strings.Fields(sql), " ")
		skipParams = ours(sql)
		if skipParams {
			continue
		}
		out = append(out, loggedStatement{SQL: truncate(sql, 400)})
	}
	return out
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}
