package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tidemark-etl/tidemark/job"
)

// benchBacklog measures a first run over a large backlog of tiny CSV files,
// on local disk and on S3 (versitygw): time per file at each size (linear
// growth is the target) and peak RSS (under -backlog-rss-target), against
// DuckDB alone over the same files where it finishes.
func benchBacklog(ctx context.Context, c *config) section {
	s := section{Title: "10. First run over a backlog of many files"}
	b := &s.Body
	local, err := parseSizes(c.BacklogSizes)
	if err == nil {
		var remote []int
		remote, err = parseSizes(c.BacklogS3Sizes)
		if err == nil {
			return backlogRuns(ctx, c, &s, local, remote)
		}
	}
	b.p("Bad sizes: " + err.Error())
	return s
}

// backlogPoint is one first run measured.
type backlogPoint struct {
	files   int
	m       measured
	res     runResult
	batches int
	reqs    requestCounts
	err     error
}

func backlogRuns(ctx context.Context, c *config, s *section, local, remote []int) section {
	b := &s.Body
	largest := 0
	for _, n := range append(append([]int{}, local...), remote...) {
		largest = max(largest, n)
	}
	cache := filepath.Join(c.DataDir, "cache")
	master, err := cachedBacklog(cache, largest, c.BacklogPerDir)
	if err != nil {
		b.p("Could not generate the input: " + err.Error())
		return *s
	}
	b.p(fmt.Sprintf("Input: tiny CSV files (a header and 2 rows, about %d bytes each) in folders of %s, generated once "+
		"into `%s` (%s files) and reused; the input of N files is the first N/%s folders, hard-linked into a folder "+
		"of its own (`%s-N`). Every run is a job's first run (fresh state, empty sink) with the job's defaults, so "+
		"it reads the backlog in batches of `batch_files` (%s): each batch is executed, committed and published "+
		"before the next, under one lease.",
		master.Bytes/int64(max(master.Files, 1)), thousands(int64(c.BacklogPerDir)), c.rel(master.Dir), thousands(int64(master.Files)),
		thousands(int64(c.BacklogPerDir)), c.rel(master.Dir), thousands(int64(c.BacklogBatch))))
	batch := 0 // the default
	if c.BacklogBatch != job.DefaultBatchFiles {
		batch = c.BacklogBatch
	}
	job := func(src, sink string) jobFile {
		return jobFile{Name: "bench-backlog", Source: src, Sink: sink, BatchFiles: batch}
	}
	b.code("yaml", job("$CACHE/backlog-N", "$SCRATCH/backlog/local-N/out").yaml())
	if c.bin.tidemark == "" {
		b.p("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
		return *s
	}

	// Local disk.
	var localPts []backlogPoint
	for _, n := range local {
		dir, err := backlogSubset(cache, master, n, c.BacklogPerDir)
		if err != nil {
			s.Problems = append(s.Problems, err.Error())
			continue
		}
		run := filepath.Join(c.work, "backlog", fmt.Sprintf("local-%d", n))
		jobPath, err := writeJob(run, job(dir, filepath.Join(run, "out")))
		if err != nil {
			s.Problems = append(s.Problems, err.Error())
			continue
		}
		logf("backlog: first run over %s local files", thousands(int64(n)))
		p := backlogPoint{files: n}
		p.m, p.res, p.err = tidemarkRun(ctx, c, jobPath, "first")
		p.batches = batchesOf(p.m.Stdout)
		logf("backlog: local %s files: %s, peak RSS %s, %d batches, %s", thousands(int64(n)), secs(p.m.Wall), mb(p.m.PeakRSS), p.batches, p.m.status())
		s.Problems = append(s.Problems, p.check(ctx, c, "local", filepath.Join(run, "out"))...)
		localPts = append(localPts, p)
		_ = os.RemoveAll(filepath.Join(run, "out"))
		if ctx.Err() != nil {
			return *s
		}
	}

	// DuckDB alone, one read over a list of the same files.
	var duck []backlogPoint
	duckSizes := []int{c.BacklogBatch}
	if len(local) > 0 {
		duckSizes = append(duckSizes, local[0])
	}
	for _, n := range duckSizes {
		if c.BacklogDuckDBTimeout <= 0 || n > master.Files || (len(duck) > 0 && duck[0].files == n) {
			continue
		}
		dir := filepath.Join(c.work, "backlog", fmt.Sprintf("duckdb-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		list := filepath.Join(dir, "files.list")
		if err := writeList(list, backlogPaths(master.Dir, n, c.BacklogPerDir)); err != nil {
			continue
		}
		logf("backlog: DuckDB alone over %s files (cap %s)", thousands(int64(n)), c.BacklogDuckDBTimeout)
		cap := c.Timeout
		c.Timeout = c.BacklogDuckDBTimeout
		m, rows, _, err := duckdbCopy(ctx, c, baselines[1], list, filepath.Join(dir, "data.parquet"), "")
		c.Timeout = cap
		if err == nil && rows != int64(2*n) {
			err = fmt.Errorf("wrote %d rows, want %d", rows, 2*n)
		}
		logf("backlog: DuckDB alone over %s files: %s, peak RSS %s, %s", thousands(int64(n)), secs(m.Wall), mb(m.PeakRSS), m.status())
		duck = append(duck, backlogPoint{files: n, m: m, err: err})
		_ = os.RemoveAll(dir)
	}

	// S3.
	var s3Pts []backlogPoint
	var gwVersion string
	if len(remote) > 0 {
		s3Pts, gwVersion = backlogS3(ctx, c, s, cache, master, remote)
	}

	// The report.
	b.h3("Local disk")
	b.table([]string{"files", "time", "time per file", "CPU", "peak RSS", "batches", "status"}, pointRows(localPts, false))
	if len(duck) > 0 {
		b.h3("DuckDB alone")
		b.p(fmt.Sprintf("`bench/duckdbcopy` with tidemark's settings (`%s`), one `read_csv` over the list of the first N files (header "+
			"sniffed), capped at %s:", strings.Join(baselines[1].sets, "; "), c.BacklogDuckDBTimeout))
		b.table([]string{"files", "time", "time per file", "CPU", "peak RSS", "batches", "status"}, pointRows(duck, false))
	}
	if len(remote) > 0 {
		b.h3("S3 (versitygw)")
		b.p(fmt.Sprintf("The same files as objects `s3://incoming/backlog-N/dNNNN/fNNNN.csv` on a versitygw %s started by the harness "+
			"(hard links of the cached files in its posix folder, each with the ETag a PUT stores), the output to "+
			"`s3://lake/backlog-N/`, through the harness's counting proxy; tidemark downloads the inputs into its spill "+
			"folder, %d at a time (`io.concurrency`'s default), batch by batch.", gwVersion, 8))
		b.table([]string{"objects", "time", "time per object", "tidemark CPU", "peak RSS", "batches", "status", "versitygw CPU", "requests"}, pointRows(s3Pts, true))
	}

	// The summary: the largest run's RSS against the target, and how the
	// time per file grew from the smallest to the largest size.
	summarize := func(where string, pts []backlogPoint) {
		if len(pts) == 0 {
			return // no sizes asked for here (-backlog-sizes or -backlog-s3-sizes empty)
		}
		var ok []backlogPoint
		for _, p := range pts {
			if p.err == nil {
				ok = append(ok, p)
			}
		}
		if len(ok) == 0 {
			s.Summary = append(s.Summary, summaryRow{fmt.Sprintf("First run over a backlog, %s", where), "failed", "—", "—", "report", "**failed**"})
			return
		}
		lo, hi := ok[0], ok[len(ok)-1]
		var peak int64
		for _, p := range ok {
			peak = max(peak, p.m.PeakRSS)
		}
		s.Summary = append(s.Summary, summaryRow{
			Measure:  fmt.Sprintf("First run over %s files, %s: peak RSS (largest of %d sizes)", thousands(int64(hi.files)), where, len(ok)),
			Tidemark: mb(peak), Baseline: "—", Ratio: "—", Target: "< " + mb(c.BacklogRSSTarget), Result: passFail(peak < c.BacklogRSSTarget)})
		if len(ok) > 1 {
			growth := perFile(hi).Seconds() / perFile(lo).Seconds()
			s.Summary = append(s.Summary, summaryRow{
				Measure:  fmt.Sprintf("First run, %s: time per file at %s files vs %s", where, thousands(int64(hi.files)), thousands(int64(lo.files))),
				Tidemark: fmt.Sprintf("%s (%s in all)", usPer(perFile(hi)), secs(hi.m.Wall)), Baseline: fmt.Sprintf("%s (%s in all)", usPer(perFile(lo)), secs(lo.m.Wall)),
				Ratio: ratio(growth), Target: fmt.Sprintf("≤ %.1f× (linear)", c.BacklogLinearTarget), Result: passFail(growth <= c.BacklogLinearTarget)})
		}
	}
	summarize("local disk", localPts)
	if len(remote) > 0 {
		summarize("S3", s3Pts)
	}
	return *s
}

// check reports a run that failed, read another number of files, or left
// its sink without exactly its input's rows.
func (p backlogPoint) check(ctx context.Context, c *config, where, out string) []string {
	if p.err != nil {
		return []string{fmt.Sprintf("first run over %s %s files: %s", thousands(int64(p.files)), where, describeErr(p.m, p.err))}
	}
	if got := p.res.Sources["orders"].Files; got != int64(p.files) {
		return []string{fmt.Sprintf("first run over %s %s files read %d", thousands(int64(p.files)), where, got)}
	}
	return checkOutput(ctx, c, fmt.Sprintf("backlog scenario, %s, %s files", where, thousands(int64(p.files))), out, int64(2*p.files))
}

func perFile(p backlogPoint) time.Duration { return p.m.Wall / time.Duration(max(p.files, 1)) }

func usPer(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1000) }

func pointRows(pts []backlogPoint, s3 bool) [][]string {
	var rows [][]string
	for _, p := range pts {
		st := "ok"
		if p.err != nil {
			st = p.m.status()
		}
		batches := "—"
		if p.batches > 0 {
			batches = strconv.Itoa(p.batches)
		}
		row := []string{thousands(int64(p.files)), secs(p.m.Wall) + busyNote(p.m), usPer(perFile(p)), secs(p.m.CPU), mb(p.m.PeakRSS), batches, st}
		if s3 {
			row = append(row, secs(p.m.ServerCPU), p.reqs.String())
		}
		rows = append(rows, row)
	}
	return rows
}

// batchesOf counts the batches in a run --json.
func batchesOf(stdout []byte) int {
	var r struct {
		Batches []json.RawMessage `json:"batches"`
	}
	if json.Unmarshal(stdout, &r) != nil {
		return 0
	}
	return max(1, len(r.Batches))
}

// backlogS3 puts the first N cached files into versitygw for each size and
// times a first run over each.
func backlogS3(ctx context.Context, c *config, s *section, cache string, master tree, sizes []int) ([]backlogPoint, string) {
	base := filepath.Join(c.work, "backlog", "s3")
	gw, err := startGateway(ctx, filepath.Join(base, "gw"))
	if err != nil {
		s.Problems = append(s.Problems, "versitygw could not be started: "+err.Error())
		return nil, ""
	}
	defer gw.stop()
	proxy, err := startCountingProxy(gw.endpoint)
	if err != nil {
		s.Problems = append(s.Problems, "the counting proxy could not be started: "+err.Error())
		return nil, gw.version
	}
	defer proxy.close()
	if err := gw.createBuckets(ctx, "incoming", "lake"); err != nil {
		s.Problems = append(s.Problems, err.Error())
		return nil, gw.version
	}
	env := gw.environ(proxy.url, base)
	var pts []backlogPoint
	for _, n := range sizes {
		prefix := fmt.Sprintf("backlog-%d/", n)
		logf("backlog: linking %s objects into versitygw", thousands(int64(n)))
		if err := linkObjects(gw, "incoming", prefix, master.Dir, backlogPaths(master.Dir, n, c.BacklogPerDir)); err != nil {
			s.Problems = append(s.Problems, "could not put the objects: "+err.Error())
			break
		}
		jobDir := filepath.Join(base, fmt.Sprintf("job-%d", n))
		j := jobFile{Name: "bench-backlog-s3", Source: "s3://incoming/" + prefix, Sink: "s3://lake/" + prefix}
		if c.BacklogBatch != job.DefaultBatchFiles {
			j.BatchFiles = c.BacklogBatch
		}
		jobPath, err := writeJob(jobDir, j)
		if err != nil {
			s.Problems = append(s.Problems, err.Error())
			break
		}
		logf("backlog: first run over %s S3 objects", thousands(int64(n)))
		proxy.take()
		p := backlogPoint{files: n}
		p.m, p.res, p.err = tidemarkRunWith(ctx, c, jobPath, "first", env, gw.cpu)
		p.reqs = proxy.take()
		p.batches = batchesOf(p.m.Stdout)
		logf("backlog: S3 %s objects: %s, peak RSS %s, %d batches, %s; requests: %s", thousands(int64(n)), secs(p.m.Wall), mb(p.m.PeakRSS), p.batches, p.m.status(), p.reqs)
		s.Problems = append(s.Problems, p.check(ctx, c, "S3", filepath.Join(gw.dir, "lake", strings.TrimSuffix(prefix, "/")))...)
		pts = append(pts, p)
		_ = os.RemoveAll(filepath.Join(gw.dir, "incoming", strings.TrimSuffix(prefix, "/")))
		_ = os.RemoveAll(filepath.Join(gw.dir, "lake", strings.TrimSuffix(prefix, "/")))
		if ctx.Err() != nil {
			break
		}
	}
	return pts, gw.version
}

// linkObjects makes each file an object under prefix in versitygw's posix
// folder: a hard link with the ETag a PUT stores.
func linkObjects(gw *gateway, bucket, prefix, root string, files []string) error {
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		p := gw.files.ObjectPath(bucket, prefix+filepath.ToSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Link(f, p); err != nil {
			return err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		sum := md5.Sum(data)
		if err := unix.Setxattr(p, "user.etag", []byte(`"`+hex.EncodeToString(sum[:])+`"`), 0); err != nil {
			return fmt.Errorf("setting the ETag of %s: %w", p, err)
		}
	}
	return nil
}

// cachedBacklog is the cached tree of n tiny files, perDir a folder,
// generated once (a manifest next to it says it is complete).
func cachedBacklog(cache string, n, perDir int) (tree, error) {
	dirs := (n + perDir - 1) / perDir
	t := tree{Dir: filepath.Join(cache, fmt.Sprintf("backlog-%dx%d", dirs, perDir))}
	manifest := t.Dir + ".json"
	if data, err := os.ReadFile(manifest); err == nil && json.Unmarshal(data, &t) == nil && t.Files == dirs*perDir {
		return t, nil
	}
	logf("backlog: generating %s tiny files under %s (once)", thousands(int64(dirs*perDir)), t.Dir)
	start := time.Now()
	if err := os.RemoveAll(t.Dir); err != nil {
		return t, err
	}
	g, err := genTree(t.Dir, dirs, perDir)
	if err != nil {
		return t, err
	}
	data, _ := json.Marshal(g)
	logf("backlog: generated in %s", time.Since(start).Round(time.Second))
	return g, os.WriteFile(manifest, data, 0o644)
}

// backlogPaths are the first n files of the cached tree, in folder order.
func backlogPaths(root string, n, perDir int) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, filepath.Join(root, fmt.Sprintf("d%04d", i/perDir), fmt.Sprintf("f%04d.csv", i%perDir)))
	}
	return out
}

// backlogSubset is a folder holding the first n files of the cached tree
// (all of it when n is its size), as hard links made once.
func backlogSubset(cache string, master tree, n, perDir int) (string, error) {
	if n == master.Files {
		return master.Dir, nil
	}
	dir := filepath.Join(cache, fmt.Sprintf("backlog-%d-of-%d", n, master.Files))
	done := dir + ".done"
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	_ = os.RemoveAll(dir)
	for _, f := range backlogPaths(master.Dir, n, perDir) {
		rel, _ := filepath.Rel(master.Dir, f)
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.Link(f, p); err != nil {
			return "", fmt.Errorf("linking the backlog of %d files: %w", n, err)
		}
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// parseSizes reads "100000,300000".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("size %q: want a positive number of files", f)
		}
		out = append(out, n)
	}
	return out, nil
}
