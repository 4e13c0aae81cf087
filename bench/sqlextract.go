package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// benchSQLExtract measures a first run over a table of new rows in
// PostgreSQL and in MariaDB, written to Parquet, against the database's own
// export tool writing the same rows to a file: psql's COPY (SELECT ...) TO
// STDOUT, and mariadb --quick.
func benchSQLExtract(ctx context.Context, c *config) section {
	s := section{Title: "6. Table → Parquet against the databases' export tools"}
	b := &s.Body
	b.p(fmt.Sprintf("Each database gets a table of %s rows, the table of `source/sqltable/sqlbench` (`id` the primary key):",
		thousands(int64(c.SQLRows))))
	b.code("sql", "-- PostgreSQL\n"+pgFillSQL("bench", 1, c.SQLRows)+";"+"\n-- MariaDB\n"+mariaFillSQL("bench", 1, c.SQLRows))
	b.p("**tidemark**: `tidemark run job.yaml --json` with a fresh state and an empty sink folder each repetition, so the " +
		"run reads every row as new (it reads them in one snapshot, handing them to DuckDB through a pipe as they " +
		"arrive, and writes one Parquet " +
		"file). The password comes through `password_env`. **Export tool**: the database's client writes the same " +
		"columns of every row to a file in its plain text format. Each side runs " + fmt.Sprint(c.Reps) + " times, " +
		"alternating which runs first, after one unmeasured export that warms the server's cache. The database " +
		"server's CPU time during each run is part of the work measured, not counted as other processes' load.")
	for _, kind := range []string{"postgres", "mariadb"} {
		row, body, problems := sqlExtractOne(ctx, c, kind)
		s.Summary = append(s.Summary, row)
		s.Problems = append(s.Problems, problems...)
		b.b.WriteString(body.b.String())
		if ctx.Err() != nil {
			break
		}
	}
	return s
}

// sqlSample is one timed run of either side.
type sqlSample struct {
	m    measured
	rows int64 // rows written: the sink's, read back, or the export's lines
	size int64 // bytes written
}

func sqlExtractOne(ctx context.Context, c *config, kind string) (summaryRow, doc, []string) {
	var b doc
	var problems []string
	title, tool := "PostgreSQL", "psql COPY … TO STDOUT > file"
	if kind == "mariadb" {
		title, tool = "MariaDB", "mariadb --quick -e > file"
	}
	row := summaryRow{Measure: fmt.Sprintf("%s → Parquet, %s new rows: throughput", title, thousands(int64(c.SQLRows))),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≥ %.2f× %s", c.SQLExtractTarget, tool), Result: "not measured"}
	b.h3(title)
	notMeasured := func(why string) (summaryRow, doc, []string) {
		b.p(why)
		return row, b, problems
	}
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	var srv *server
	var err error
	if kind == "postgres" {
		srv, err = c.srv.postgres(ctx)
	} else {
		srv, err = c.srv.mariadb(ctx)
	}
	if err != nil {
		return notMeasured("Not measured: " + err.Error())
	}
	row.Measure = fmt.Sprintf("%s → Parquet, %s new rows: throughput", srv.name, thousands(int64(c.SQLRows)))
	db, err := createDB(ctx, srv, "tm_bench_extract")
	if err != nil {
		return notMeasured("Could not create the database: " + err.Error())
	}
	defer db.drop()
	logf("sql-extract: filling %s rows into %s", thousands(int64(c.SQLRows)), srv.name)
	fillStart := time.Now()
	if err := db.fill(ctx, "bench", c.SQLRows); err != nil {
		return notMeasured("Could not fill the table: " + err.Error())
	}
	fillTime := time.Since(fillStart)

	base := filepath.Join(c.work, "sql-extract-"+kind)
	job := func(dir string) sqlJob {
		return sqlJob{Name: "bench-sql-extract", Conn: srv.url(db.name), Table: "bench", Sink: filepath.Join(dir, "out")}
	}
	env := []string{sqlPasswordEnv + "=" + sqlPassword}
	tidemark := func(rep int) sqlSample {
		dir := filepath.Join(base, fmt.Sprintf("tidemark-%d", rep))
		defer os.RemoveAll(dir)
		j := job(dir)
		jobPath, err := j.write(dir)
		if err != nil {
			return sqlSample{m: measured{Err: err}}
		}
		m, res, err := tidemarkRunWith(ctx, c, jobPath, "run", env, srv.cpu)
		m.Err = err
		x := sqlSample{m: m}
		if err != nil {
			return x
		}
		if got := res.Sources["bench_db"].Rows; got != int64(c.SQLRows) {
			problems = append(problems, fmt.Sprintf("%s → Parquet rep %d: the run reported reading %s rows, want %s",
				title, rep+1, thousands(got), thousands(int64(c.SQLRows))))
		}
		var files int
		files, x.rows, x.size, err = outputRows(ctx, c, j.Sink)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s → Parquet rep %d: %v", title, rep+1, err))
		} else if x.rows != int64(c.SQLRows) {
			problems = append(problems, fmt.Sprintf("%s → Parquet rep %d: the sink holds %s rows in %d Parquet files, want %s",
				title, rep+1, thousands(x.rows), files, thousands(int64(c.SQLRows))))
		}
		return x
	}
	query := "SELECT id, a, b, c, d FROM bench"
	var args []string
	if srv.postgres {
		args = []string{"-X", "-q", "-h", srv.host, "-p", strconv.Itoa(srv.port), "-U", "postgres", "-d", db.name,
			"-c", "COPY (" + query + ") TO STDOUT"}
	} else {
		args = []string{"--no-defaults", "--quick", "--batch", "-h", srv.host, "-P", strconv.Itoa(srv.port), "-u", "tidemark",
			"-e", query, db.name}
	}
	wantLines := int64(c.SQLRows)
	if !srv.postgres {
		wantLines++ // --batch prints the column names first
	}
	baseline := func(rep int) sqlSample {
		out := filepath.Join(base, fmt.Sprintf("export-%d.txt", rep))
		defer os.Remove(out)
		if err := os.MkdirAll(base, 0o755); err != nil {
			return sqlSample{m: measured{Err: err}}
		}
		m := timeProcess(ctx, runSpec{Name: srv.clientBin, Args: args, Env: srv.clientEnv(), Timeout: c.Timeout,
			Settle: c.Settle, StdoutFile: out, Servers: srv.cpu})
		x := sqlSample{m: m}
		if m.Err != nil {
			return x
		}
		lines, size, err := countLines(out)
		x.rows, x.size = lines, size
		if err == nil && lines != wantLines {
			err = fmt.Errorf("the export has %s lines, want %s", thousands(lines), thousands(wantLines))
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s export rep %d: %v", title, rep+1, err))
		}
		return x
	}
	if x := baseline(-1); x.m.Err != nil { // warms the server's cache
		return notMeasured("The export tool failed: " + describeErr(x.m, x.m.Err))
	}

	type side struct {
		label   string
		run     func(int) sqlSample
		samples []sqlSample
		retaken int
	}
	sides := []*side{{label: "tidemark", run: tidemark}, {label: filepath.Base(srv.clientBin) + " (export tool)", run: baseline}}
	for rep := range c.Reps {
		for i := range sides {
			sd := sides[(i+rep)%len(sides)]
			x := retake(ctx, c, fmt.Sprintf("sql-extract %s rep %d %s", kind, rep+1, sd.label),
				func() sqlSample { return sd.run(rep) }, func(x sqlSample) measured { return x.m }, &sd.retaken)
			logf("sql-extract %s rep %d %s: %s %s%s (server CPU %s)", kind, rep+1, sd.label, secs(x.m.Wall), x.m.status(),
				busyNote(x.m), secs(x.m.ServerCPU))
			if x.m.Err != nil {
				problems = append(problems, fmt.Sprintf("%s, %s rep %d failed: %s", title, sd.label, rep+1, describeErr(x.m, x.m.Err)))
			}
			sd.samples = append(sd.samples, x)
		}
		if ctx.Err() != nil {
			break
		}
	}

	medOf := func(sd *side) time.Duration {
		var ts []time.Duration
		for _, x := range sd.samples {
			if x.m.Err == nil {
				ts = append(ts, x.m.Wall)
			}
		}
		return median(ts)
	}
	tmMed, baseMed := medOf(sides[0]), medOf(sides[1])
	n := int64(c.SQLRows)
	if tmMed > 0 {
		row.Tidemark = rowsPerSec(n, tmMed)
	} else {
		row.Tidemark, row.Result = "failed", "**FAIL** (tidemark did not complete)"
	}
	if baseMed > 0 {
		row.Baseline = rowsPerSec(n, baseMed) + " (" + tool + ")"
	}
	if tmMed > 0 && baseMed > 0 {
		r := baseMed.Seconds() / tmMed.Seconds()
		row.Ratio = ratio(r)
		row.Result = passFail(r >= c.SQLExtractTarget)
	}

	b.p(fmt.Sprintf("%s (`%s`), started by the harness (%s rows filled in %s, not measured). The job:", srv.name, srv.version,
		thousands(n), secs(fillTime)))
	b.code("yaml", c.show(strings.ReplaceAll(job(filepath.Join(base, "tidemark-N")).yaml(), strconv.Itoa(srv.port), "PORT")))
	shown := append([]string{filepath.Base(srv.clientBin)}, args...)
	for i, a := range shown {
		if strings.ContainsAny(a, " *()") {
			shown[i] = strconv.Quote(a)
		}
	}
	env0 := strings.SplitN(srv.clientEnv()[0], "=", 2)[0]
	b.p("The export tool (the password in `" + env0 + "`):")
	b.code("sh", strings.ReplaceAll(strings.Join(shown, " "), strconv.Itoa(srv.port), "PORT")+" > export.txt")
	var rows [][]string
	for _, sd := range sides {
		var each []string
		var size int64
		var rss []int64
		var cpu []time.Duration
		for _, x := range sd.samples {
			if x.m.Err != nil {
				each = append(each, x.m.status())
				continue
			}
			each = append(each, secs(x.m.Wall)+busyNote(x.m))
			size = x.size
			rss = append(rss, x.m.PeakRSS)
			cpu = append(cpu, x.m.ServerCPU)
		}
		med := medOf(sd)
		if med == 0 {
			rows = append(rows, []string{sd.label, "—", "—", "—", "—", "—", orDash(strings.Join(each, ", ")), fmt.Sprint(sd.retaken)})
			continue
		}
		rows = append(rows, []string{sd.label, secs(med), rowsPerSec(n, med), mb(size), mb(medianInt(rss)), secs(median(cpu)),
			strings.Join(each, ", "), fmt.Sprint(sd.retaken)})
	}
	b.table([]string{"", "median time", "rows/s", "written", "peak RSS", "server CPU", "each repetition", "disturbed, retaken"}, rows)
	if tmMed > 0 && baseMed > 0 {
		b.p(fmt.Sprintf("Throughput tidemark / export tool: %s. Target ≥ %.2f×: %s.", row.Ratio, c.SQLExtractTarget, row.Result))
	}
	return row, b, problems
}

// sqlJob is a job reading one table into a Parquet folder.
type sqlJob struct {
	Name, Conn, Table, Sink string
	// RegressionCheck and RegressionRows, when set, write
	// regression_check: and regression_check_rows: explicitly.
	RegressionCheck *bool
	RegressionRows  *int64
}

func (j sqlJob) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job: %s\n", j.Name)
	b.WriteString("sources:\n")
	b.WriteString("  - ctx: bench_db\n")
	fmt.Fprintf(&b, "    connection: %s\n", strconv.Quote(j.Conn))
	fmt.Fprintf(&b, "    password_env: %s\n", sqlPasswordEnv)
	fmt.Fprintf(&b, "    table: %s\n", j.Table)
	if j.RegressionCheck != nil {
		fmt.Fprintf(&b, "    regression_check: %t\n", *j.RegressionCheck)
	}
	if j.RegressionRows != nil {
		fmt.Fprintf(&b, "    regression_check_rows: %d\n", *j.RegressionRows)
	}
	b.WriteString("sinks:\n")
	b.WriteString("  - ctx: out\n")
	fmt.Fprintf(&b, "    path: %s\n", strconv.Quote(j.Sink))
	b.WriteString("    format: parquet\n")
	b.WriteString("    mode: append\n")
	return b.String()
}

func (j sqlJob) write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "job.yaml")
	return p, os.WriteFile(p, []byte(j.yaml()), 0o644)
}

// database is a database the scenario creates on a server and drops.
type database struct {
	srv  *server
	name string
}

func createDB(ctx context.Context, srv *server, name string) (*database, error) {
	d := &database{srv: srv, name: name}
	drop := "DROP DATABASE IF EXISTS " + name
	if srv.postgres {
		drop += " WITH (FORCE)"
	}
	if _, err := srv.query(ctx, "", drop); err != nil {
		return nil, err
	}
	if _, err := srv.query(ctx, "", "CREATE DATABASE "+name); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *database) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := "DROP DATABASE IF EXISTS " + d.name
	if d.srv.postgres {
		q += " WITH (FORCE)"
	}
	if _, err := d.srv.query(ctx, "", q); err != nil {
		logf("dropping database %s: %v", d.name, err)
	}
}

// exec runs statements one by one (VACUUM cannot share a query string).
func (d *database) exec(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		if _, err := d.srv.query(ctx, d.name, q); err != nil {
			return err
		}
	}
	return nil
}

// fill creates table (id, a, b, c, d) with rows 1..n, as sqlbench does;
// on PostgreSQL the primary key is added after the rows (one sorted index
// build) and the table vacuumed and analyzed.
func (d *database) fill(ctx context.Context, table string, n int) error {
	if d.srv.postgres {
		return d.exec(ctx, strings.Split(pgFillSQL(table, 1, n), ";\n")...)
	}
	return d.exec(ctx, mariaFillSQL(table, 1, n))
}

// pgFillSQL creates and fills the table: statements separated by ";\n".
func pgFillSQL(table string, from, to int) string {
	return strings.Join([]string{
		fmt.Sprintf("CREATE TABLE %s (id bigint NOT NULL, a integer, b text, c timestamp, d numeric(12,2))", table),
		pgInsertSQL(table, from, to),
		fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (id)", table),
		fmt.Sprintf("VACUUM (ANALYZE) %s", table),
	}, ";\n")
}

// pgInsertSQL inserts rows from..to.
func pgInsertSQL(table string, from, to int) string {
	return fmt.Sprintf("INSERT INTO %s SELECT g, g %% 1000, 'name ' || g, timestamp '2024-01-01' + g * interval '1 second', "+
		"(g %% 100000) / 100.0 FROM generate_series(%d, %d) g", table, from, to)
}

// mariaFillSQL creates and fills the table with MariaDB's sequence engine,
// a million rows a statement.
func mariaFillSQL(table string, from, to int) string {
	stmts := []string{fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, a int, b varchar(100), c datetime(6), d decimal(12,2))", table)}
	for start := from; start <= to; start += 1_000_000 {
		end := min(start+999_999, to)
		stmts = append(stmts, fmt.Sprintf("INSERT INTO %s SELECT seq, seq %% 1000, CONCAT('name ', seq), "+
			"TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, (seq %% 100000) / 100.0 FROM seq_%d_to_%d", table, start, end))
	}
	stmts = append(stmts, "ANALYZE TABLE "+table)
	return strings.Join(stmts, ";\n") + ";"
}

// countLines counts the lines of a file and its size.
func countLines(name string) (lines, size int64, err error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		size += int64(n)
		if err == io.EOF {
			return lines, size, nil
		}
		if err != nil {
			return lines, size, err
		}
	}
}
