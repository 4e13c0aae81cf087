// Package sqlbench measures SQL table sources against the databases' own
// export tools, for bench/ and docs/benchmarks.md:
//
//   - Extract: a first run over n rows (PostgreSQL or MariaDB) against
//     psql's COPY (SELECT ...) TO STDOUT, or mysql --quick -e, writing the
//     same rows to a file; the figure is the ratio of their times.
//   - Incremental: a run that finds a few new rows in a large PostgreSQL
//     table: its time, and the rows PostgreSQL read for it (pg_stat
//     counters), which show whether the index was used.
//
// Each function builds its table in a fresh database of the given server,
// drops it at the end, and needs the client binary (psql, mysql) on PATH.
package sqlbench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/source/sqltable"
)

// Result is one measurement.
type Result struct {
	Name string
	Rows int64
	// Tidemark is the source's Plan+Extract time; Baseline the export
	// tool's time over the same rows (0 when there is none).
	Tidemark time.Duration
	Baseline time.Duration
	// Bytes are the sizes of what each wrote.
	TidemarkBytes, BaselineBytes int64
	// Setup is the time spent building the data (not measured).
	Setup time.Duration
	// Scanned are PostgreSQL's counters over the measured run: rows read
	// by sequential scans, index entries read, heap rows fetched through
	// indexes; Plan is EXPLAIN of the run's range read.
	SeqRead, IdxRead, IdxFetch int64
	Plan                       string
	// Breakdown times the run's parts where measured (plan, extract).
	PlanTime, ExtractTime time.Duration
}

// Ratio is Baseline/Tidemark: 1 means as fast as the export tool.
func (r Result) Ratio() float64 {
	if r.Tidemark == 0 {
		return 0
	}
	return r.Baseline.Seconds() / r.Tidemark.Seconds()
}

func (r Result) String() string {
	s := fmt.Sprintf("%s: %d rows, tidemark %v (plan %v, extract %v, %d bytes)", r.Name, r.Rows,
		r.Tidemark.Round(time.Millisecond), r.PlanTime.Round(time.Millisecond), r.ExtractTime.Round(time.Millisecond), r.TidemarkBytes)
	if r.Baseline > 0 {
		s += fmt.Sprintf(", baseline %v (%d bytes), ratio %.2f", r.Baseline.Round(time.Millisecond), r.BaselineBytes, r.Ratio())
	}
	if r.Plan != "" {
		s += fmt.Sprintf(", seq rows read %d, index entries read %d, heap fetches %d\n%s", r.SeqRead, r.IdxRead, r.IdxFetch, r.Plan)
	}
	return s
}

// server is a fresh database on a server for one measurement.
type server struct {
	kind     sqldb.Kind
	admin    *url.URL // server URL with its password
	name     string
	conn     string // the database's URL without password
	password string
	db       *sqldb.DB
}

const passwordEnv = "TIDEMARK_SQLBENCH_PASSWORD"

func newServer(ctx context.Context, serverURL string) (*server, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("server URL: %w", err)
	}
	kind, err := sqldb.KindOf(serverURL)
	if err != nil {
		return nil, err
	}
	pw, _ := u.User.Password()
	os.Setenv(passwordEnv, pw)
	s := &server{kind: kind, password: pw, name: fmt.Sprintf("tm_bench_%d", time.Now().UnixNano()%1e9)}
	s.admin = &url.URL{Scheme: u.Scheme, User: url.User(u.User.Username()), Host: u.Host, Path: u.Path}
	root, err := sqldb.Open(ctx, s.admin.String(), passwordEnv, sqldb.Options{})
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE "+kind.Quote(s.name)); err != nil {
		return nil, fmt.Errorf("creating database %s: %w", s.name, err)
	}
	d := *s.admin
	d.Path = "/" + s.name
	s.conn = d.String()
	if s.db, err = sqldb.Open(ctx, s.conn, passwordEnv, sqldb.Options{}); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *server) close() {
	s.db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if root, err := sqldb.Open(ctx, s.admin.String(), passwordEnv, sqldb.Options{}); err == nil {
		drop := "DROP DATABASE IF EXISTS " + s.kind.Quote(s.name)
		if s.kind == sqldb.Postgres {
			drop += " WITH (FORCE)"
		}
		_, _ = root.ExecContext(ctx, drop)
		root.Close()
	}
}

func (s *server) exec(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// fill creates table bench(id, a, b, c, d) with rows 1..n.
func (s *server) fill(ctx context.Context, n int) error {
	if s.kind == sqldb.Postgres {
		return s.exec(ctx,
			"CREATE TABLE bench (id bigint PRIMARY KEY, a integer, b text, c timestamp, d numeric(12,2))",
			fmt.Sprintf(`INSERT INTO bench SELECT g, g %% 1000, 'name ' || g, timestamp '2024-01-01' + g * interval '1 second',
				(g %% 100000) / 100.0 FROM generate_series(1, %d) g`, n),
			"VACUUM (ANALYZE) bench")
	}
	stmts := []string{"CREATE TABLE bench (id bigint PRIMARY KEY, a int, b varchar(100), c datetime(6), d decimal(12,2))"}
	for start := 1; start <= n; start += 1000000 {
		end := min(start+999999, n)
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO bench SELECT seq, seq %% 1000, CONCAT('name ', seq),
			TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq SECOND, (seq %% 100000) / 100.0 FROM seq_%d_to_%d`, start, end))
	}
	return s.exec(ctx, append(stmts, "ANALYZE TABLE bench")...)
}

// Extract measures a first run over n rows of a new table on serverURL
// (postgres://user:password@host:port/db or mysql://...) against the
// database's export tool writing the same rows to a file in dir.
func Extract(ctx context.Context, serverURL string, n int, dir string) (Result, error) {
	s, err := newServer(ctx, serverURL)
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	r := Result{Name: fmt.Sprintf("%s: first run over %d rows", s.kind, n)}
	t0 := time.Now()
	if err := s.fill(ctx, n); err != nil {
		return r, err
	}
	r.Setup = time.Since(t0)

	// Each side runs three times, alternating, after one unmeasured
	// read that warms the server's cache; the best time counts.
	if _, _, err := s.baseline(ctx, serverURL, dir); err != nil {
		return r, err
	}
	for range 3 {
		d, n, err := s.baseline(ctx, serverURL, dir)
		if err != nil {
			return r, err
		}
		if r.Baseline == 0 || d < r.Baseline {
			r.Baseline, r.BaselineBytes = d, n
		}
		m, err := s.tidemark(ctx, dir)
		if err != nil {
			return r, err
		}
		if r.Tidemark == 0 || m.Tidemark < r.Tidemark {
			r.Tidemark, r.PlanTime, r.ExtractTime, r.Rows, r.TidemarkBytes = m.Tidemark, m.PlanTime, m.ExtractTime, m.Rows, m.TidemarkBytes
		}
	}
	return r, nil
}

// baseline runs the database's export tool over the table into a file.
func (s *server) baseline(ctx context.Context, serverURL, dir string) (time.Duration, int64, error) {
	base := filepath.Join(dir, "baseline.out")
	defer os.Remove(base)
	out, err := os.Create(base)
	if err != nil {
		return 0, 0, err
	}
	u, _ := url.Parse(serverURL)
	var cmd *exec.Cmd
	if s.kind == sqldb.Postgres {
		d := *s.admin
		d.Path = "/" + s.name
		cmd = exec.CommandContext(ctx, "psql", d.String(), "-X", "-q", "-c",
			"COPY (SELECT id, a, b, c, d FROM bench) TO STDOUT (FORMAT csv)")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+s.password)
	} else {
		cmd = exec.CommandContext(ctx, "mysql", "--no-defaults", "--quick", "--batch", "-h", u.Hostname(), "-P", u.Port(),
			"-u", u.User.Username(), "-e", "SELECT id, a, b, c, d FROM bench", s.name)
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+s.password)
	}
	cmd.Stdout = out
	t0 := time.Now()
	err = cmd.Run()
	d := time.Since(t0)
	out.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("running %s: %w", cmd.Path, err)
	}
	return d, size(base), nil
}

// tidemark runs a first Plan+Extract over the table.
func (s *server) tidemark(ctx context.Context, dir string) (Result, error) {
	var r Result
	src, err := sqltable.Open(ctx, sqltable.Config{Ctx: "bench", Connection: s.conn, PasswordEnv: passwordEnv, Table: "bench"})
	if err != nil {
		return r, err
	}
	defer src.Close()
	t0 := time.Now()
	p, err := src.Plan(ctx, nil)
	if err != nil {
		return r, err
	}
	r.PlanTime = time.Since(t0)
	t1 := time.Now()
	ex, err := p.Extract(ctx, dir)
	if err != nil {
		return r, err
	}
	r.ExtractTime = time.Since(t1)
	r.Tidemark = time.Since(t0)
	r.Rows = ex.Rows
	for _, f := range ex.Files {
		r.TidemarkBytes += size(f)
		os.Remove(f)
	}
	return r, nil
}

// Incremental measures runs that each find newRows new rows in a
// PostgreSQL table of total rows, after a first run read them all: one
// with the regression check (which counts every row behind the mark) and
// one without (NoRegressionCheck).
func Incremental(ctx context.Context, serverURL string, total, newRows int, dir string) ([]Result, error) {
	s, err := newServer(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if s.kind != sqldb.Postgres {
		return nil, fmt.Errorf("Incremental reads PostgreSQL's statistics: give a postgres:// server")
	}
	t0 := time.Now()
	if err := s.fill(ctx, total); err != nil {
		return nil, err
	}
	cursor, err := s.run(ctx, sqltable.Config{}, nil, dir, nil)
	if err != nil {
		return nil, err
	}
	setup := time.Since(t0)
	var out []Result
	next := total
	for _, noCheck := range []bool{false, true} {
		r := Result{Name: fmt.Sprintf("postgres: %d new rows in a table of %d", newRows, total), Setup: setup}
		if noCheck {
			r.Name += " (no regression check)"
		}
		if err := s.exec(ctx, fmt.Sprintf(`INSERT INTO bench SELECT g, g %% 1000, 'name ' || g, now(), 1
			FROM generate_series(%d, %d) g`, next+1, next+newRows), "VACUUM (ANALYZE) bench"); err != nil {
			return nil, err
		}
		before, err := s.pgStats(ctx)
		if err != nil {
			return nil, err
		}
		if cursor, err = s.run(ctx, sqltable.Config{NoRegressionCheck: noCheck}, cursor, dir, &r); err != nil {
			return nil, err
		}
		time.Sleep(500 * time.Millisecond) // the source's sessions ended; their statistics land
		after, err := s.pgStats(ctx)
		if err != nil {
			return nil, err
		}
		r.SeqRead, r.IdxRead, r.IdxFetch = after[0]-before[0], after[1]-before[1], after[2]-before[2]
		if r.Plan, err = s.explain(ctx, fmt.Sprintf("SELECT * FROM bench WHERE id > %d AND id <= %d", next, next+newRows)); err != nil {
			return nil, err
		}
		next += newRows
		out = append(out, r)
	}
	return out, nil
}

// run opens the source with cfg, plans and extracts from cursor, closes
// it, and returns the next cursor; r, when set, gets the times.
func (s *server) run(ctx context.Context, cfg sqltable.Config, cursor []byte, dir string, r *Result) ([]byte, error) {
	cfg.Ctx, cfg.Connection, cfg.PasswordEnv, cfg.Table = "bench", s.conn, passwordEnv, "bench"
	src, err := sqltable.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	t0 := time.Now()
	p, err := src.Plan(ctx, cursor)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	ex, err := p.Extract(ctx, dir)
	if err != nil {
		return nil, err
	}
	if r != nil {
		r.PlanTime, r.ExtractTime, r.Tidemark, r.Rows = t1.Sub(t0), time.Since(t1), time.Since(t0), ex.Rows
	}
	for _, f := range ex.Files {
		if r != nil {
			r.TidemarkBytes += size(f)
		}
		os.Remove(f)
	}
	return ex.Cursor, nil
}

func (s *server) explain(ctx context.Context, q string) (string, error) {
	rows, err := s.db.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var plan string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
		plan += line + "\n"
	}
	return plan, rows.Err()
}

// pgStats returns the table's seq_tup_read, its indexes' idx_tup_read and
// the table's idx_tup_fetch.
func (s *server) pgStats(ctx context.Context) ([3]int64, error) {
	var v [3]int64
	_, _ = s.db.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()")
	err := s.db.QueryRowContext(ctx, `SELECT t.seq_tup_read, (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_user_indexes i
		WHERE i.relid = t.relid), coalesce(t.idx_tup_fetch, 0) FROM pg_stat_user_tables t WHERE t.relname = 'bench'`).Scan(&v[0], &v[1], &v[2])
	return v, err
}

func size(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}
