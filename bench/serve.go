package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	_ "github.com/tidemark-etl/tidemark/store/sqlite" // also registers the "sqlite" database/sql driver
)

// benchServe measures `tidemark serve` over a SQLite store of many jobs
// with long histories: response times of the jobs list and of a job's
// runs page, and the server's memory.
func benchServe(ctx context.Context, c *config) section {
	s := section{Title: fmt.Sprintf("9. tidemark serve over %d jobs × %s runs", c.ServeJobs, thousands(int64(c.ServeRuns)))}
	b := &s.Body
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = append(s.Summary, summaryRow{"serve: GET /api/v1/jobs p99", "—", "—", "—", "report", "not measured"})
		return s
	}
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	state := filepath.Join(c.DataDir, fmt.Sprintf("serve-%dx%d.db", c.ServeJobs, c.ServeRuns))
	if _, err := os.Stat(state); err != nil {
		logf("serve: filling %s (%d jobs × %d runs)", state, c.ServeJobs, c.ServeRuns)
		start := time.Now()
		if err := fillServeState(ctx, state, c.ServeJobs, c.ServeRuns); err != nil {
			os.Remove(state)
			return notMeasured("Could not fill the state store: " + err.Error())
		}
		logf("serve: filled in %s", secs(time.Since(start)))
	}
	b.p(fmt.Sprintf("A SQLite state store (cached as %s) holds %d jobs of %s succeeded runs each, one source and one sink "+
		"count per run; the runs record no job file, so the jobs list computes no plans (backlog_error). `tidemark serve` "+
		"runs on it, read-only; the harness sends %d sequential requests per route after 5 warm-up requests.",
		c.rel(state), c.ServeJobs, thousands(int64(c.ServeRuns)), c.ServeRequests))
	port, err := freePort()
	if err != nil {
		return notMeasured(err.Error())
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(ctx, c.bin.tidemark, "serve", "--state", state, "--listen", addr)
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return notMeasured("Could not start tidemark serve: " + err.Error())
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	base := "http://" + addr
	if err := waitHTTP(ctx, base+"/api/v1/session", 30*time.Second); err != nil {
		return notMeasured("tidemark serve did not answer: " + err.Error() + "\n\n" + stderr.String())
	}
	job := fmt.Sprintf("bench-%03d", c.ServeJobs/2)
	routes := []string{"/api/v1/jobs", "/api/v1/jobs/" + job, "/api/v1/jobs/" + job + "/runs?limit=50",
		"/api/v1/jobs/" + job + "/runs?limit=50&before=" + strconv.Itoa(c.ServeRuns/2)}
	var rows [][]string
	for _, r := range routes {
		lat, size, err := timeRoute(ctx, base+r, c.ServeRequests)
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("serve: GET %s: %v", r, err))
			rows = append(rows, []string{"`GET " + r + "`", "—", "—", "—", "failed"})
			continue
		}
		p50, p99 := percentile(lat, 50), percentile(lat, 99)
		rows = append(rows, []string{"`GET " + r + "`", ms(p50), ms(p99), mb(size), "ok"})
		s.Summary = append(s.Summary, summaryRow{"serve: `GET " + r + "` p50 / p99",
			ms(p50) + " / " + ms(p99), "—", "—", "report", "done"})
	}
	b.table([]string{"route", "p50", "p99", "answer", "result"}, rows)
	rss, hwm := procMem(cmd.Process.Pid)
	b.p(fmt.Sprintf("Memory of `tidemark serve` after the requests: RSS %s, peak RSS %s.", mb(rss), mb(hwm)))
	s.Summary = append(s.Summary, summaryRow{"serve: peak RSS", mb(hwm), "—", "—", "report", "done"})
	return s
}

// fillServeState makes a SQLite state store of jobs × runs succeeded
// runs: the first job through the store's API, the others copied from it
// in SQL (a commit per run for every job would take minutes).
func fillServeState(ctx context.Context, path string, jobs, runs int) error {
	st, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	first := "bench-000"
	l, err := st.AcquireLease(ctx, first, store.Holder{ID: "bench-fill", Host: "bench", PID: os.Getpid(), Started: time.Now()}, time.Hour)
	if err != nil {
		st.Close()
		return err
	}
	t0 := time.Now().Add(-time.Duration(runs) * time.Hour)
	for i := range runs {
		started := t0.Add(time.Duration(i) * time.Hour)
		r := store.Run{Job: first, RunID: fmt.Sprintf("%s-%06d", started.UTC().Format("20060102T150405Z"), i), Mode: bookmark.ModeEnable,
			Status: store.StatusSucceeded, StartedAt: started, FinishedAt: started.Add(3 * time.Second),
			Sources: map[string]store.Count{"orders": {Files: 10, Bytes: 1 << 20, Rows: 10_000}},
			Sinks:   map[string]store.Count{"out": {Files: 1, Bytes: 300_000, Rows: 10_000}}}
		if _, err := st.Commit(ctx, store.Commit{Job: first, Token: l.Token, BaseVersion: int64(i), Advance: true, Run: r}); err != nil {
			st.Close()
			return err
		}
	}
	if err := st.ReleaseLease(ctx, l); err != nil {
		st.Close()
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version, undone, purged, summary, error)
			SELECT printf('bench-%03d', n.i), run_id, seq, attempt, mode, status, started_at, finished_at, version,
			undone, purged, summary, error FROM runs, n WHERE job = 'bench-000'`,
		`INSERT INTO bookmark_versions (job, version, run_id, kind, created_at, requested_by)
			SELECT printf('bench-%03d', n.i), version, run_id, kind, created_at, requested_by
			FROM bookmark_versions, n WHERE job = 'bench-000'`,
	} {
		cte := fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) `, jobs-1)
		if jobs < 2 {
			break
		}
		if _, err := db.ExecContext(ctx, cte+q); err != nil {
			return fmt.Errorf("copying the first job: %w", err)
		}
	}
	return nil
}

// freePort asks the kernel for a free TCP port on loopback.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls url until it answers 200 or the time is up.
func waitHTTP(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// timeRoute GETs url 5 times to warm up, then n times, and returns each
// request's time and the answer's size.
func timeRoute(ctx context.Context, url string, n int) ([]time.Duration, int64, error) {
	var lat []time.Duration
	var size int64
	for i := range n + 5 {
		start := time.Now()
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return nil, 0, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, 0, err
		}
		size, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		if i >= 5 {
			lat = append(lat, time.Since(start))
		}
	}
	return lat, size, nil
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// procMem reads a process's current and peak RSS, in bytes.
func procMem(pid int) (rss, hwm int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb * 1024
		case "VmHWM:":
			hwm = kb * 1024
		}
	}
	return rss, hwm
}
