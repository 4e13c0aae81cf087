package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidemark-etl/tidemark/bookmark"
	objs3 "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/store"
	s3store "github.com/tidemark-etl/tidemark/store/s3"
)

// stateBucket holds the S3 state of the s3-state scenario.
const stateBucket = "state"

// benchS3State measures a job whose state lives in S3 (versitygw): a
// no-op run over many processed local files against find | sort, the
// state requests a run makes (counted by the proxy in front of
// versitygw), commit latency, the state's size, and a no-op run over a
// million processed files whose state is written through the store API.
func benchS3State(ctx context.Context, c *config) section {
	s := section{Title: "15. State in S3: no-op runs over 100k and 1M processed files, requests, commit latency, size"}
	b := &s.Body
	n := c.NoopDirs * c.NoopPerDir
	big := c.S3StateBigDirs * c.S3StateBigPerDir
	noopRow := summaryRow{Measure: fmt.Sprintf("No-op run over %s processed files, state in S3", thousands(int64(n))),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≤ %.1f×", c.S3StateTarget), Result: "not measured"}
	reqRow := summaryRow{Measure: "State requests of a no-op run (S3)", Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	commitRow := summaryRow{Measure: fmt.Sprintf("Commit latency, S3 state (10 files over %s)", thousands(int64(n))), Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	sizeRow := summaryRow{Measure: fmt.Sprintf("S3 state after %s files", thousands(int64(n))), Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "—"}
	bigRow := summaryRow{Measure: fmt.Sprintf("No-op run over %s processed files, state in S3: time, requests, peak RSS", thousands(int64(big))),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: fmt.Sprintf("< %s RSS", mb(c.S3StateRSSTarget)), Result: "not measured"}
	summary := func() { s.Summary = []summaryRow{noopRow, reqRow, commitRow, sizeRow, bigRow} }
	notMeasured := func(why string) section {
		b.p(why)
		summary()
		return s
	}
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	base := filepath.Join(c.work, "s3-state")
	gw, err := startGateway(ctx, filepath.Join(base, "gw"))
	if err != nil {
		return notMeasured("versitygw could not be started: " + err.Error())
	}
	defer gw.stop()
	proxy, err := startCountingProxy(gw.endpoint)
	if err != nil {
		return notMeasured("The counting proxy could not be started: " + err.Error())
	}
	defer proxy.close()
	if err := gw.createBuckets(ctx, stateBucket); err != nil {
		return notMeasured(err.Error())
	}
	env := gw.environ(proxy.url, base)
	openState := func(prefix string) (*s3store.Store, error) {
		return s3store.Open(ctx, "s3://"+stateBucket+"/"+prefix, s3store.Options{S3: objs3.Config{
			Endpoint: proxy.url, Region: gw.region,
			Credentials: credentials.NewStaticCredentialsProvider(gw.accessKey, gw.secretKey, "")}})
	}

	// 100k: the first run through the binary makes the state.
	input := filepath.Join(base, "input")
	logf("s3-state: writing %s tiny files", thousands(int64(n)))
	if _, err := genTree(input, c.NoopDirs, c.NoopPerDir); err != nil {
		return notMeasured("Could not generate the input: " + err.Error())
	}
	j := jobFile{Name: "bench-s3-state", Source: input, Sink: filepath.Join(base, "out")}
	jobPath, err := writeStateJob(filepath.Join(base, "job"), j, "s3://"+stateBucket+"/small/")
	if err != nil {
		return notMeasured(err.Error())
	}
	b.p(fmt.Sprintf("Input: %s tiny CSV files in %d folders, as in scenario 2, read by a job whose state is in S3: "+
		"`state: s3://%s/small/` on a versitygw %s started by the harness, reached through the harness's counting proxy, "+
		"so every state request below was counted (the source and sink are local: every request is a state request).",
		thousands(int64(n)), c.NoopDirs, stateBucket, gw.version))
	logf("s3-state: first run over %s files", thousands(int64(n)))
	proxy.take()
	first, _, err := tidemarkRunWith(ctx, c, jobPath, "first", env, gw.cpu)
	firstReqs := proxy.take()
	if err != nil {
		return notMeasured("The first run failed: " + describeErr(first, err))
	}
	b.table([]string{"", "time", "peak RSS", "state requests"}, [][]string{
		{"first run, all files", secs(first.Wall), mb(first.PeakRSS), fmt.Sprintf("%d (%s)", firstReqs.total(), firstReqs)}})
	if st, err := stateStats(ctx, openState, "small/"); err == nil {
		sizeRow.Tidemark = fmt.Sprintf("%s in %d objects (%s of file-record segments, %.0f B/file)",
			mb(st["bytes"]), st["objects"], mb(st["segment_bytes"]), float64(st["segment_bytes"])/float64(n))
	}

	type step struct {
		m    measured
		reqs requestCounts
	}
	var retaken int
	var noops, finds []time.Duration
	var reqs []int64
	var each [][]string
	runs := 0
	noopStep := func(jobPath string, want int64) func() step {
		return func() step {
			runs++
			proxy.take()
			m, res, err := tidemarkRunWith(ctx, c, jobPath, fmt.Sprintf("noop-%d", runs), env, gw.cpu)
			if err == nil && res.Sources["orders"].Files != want {
				err = fmt.Errorf("read %d files, want %d", res.Sources["orders"].Files, want)
			}
			m.Err = err
			return step{m, proxy.take()}
		}
	}
	findStep := func(dir string) func() step {
		return func() step {
			return step{m: timeProcess(ctx, runSpec{Name: "sh", Args: []string{"-c", findCommand, "sh", dir}, Timeout: c.Timeout, Settle: c.Settle})}
		}
	}
	stepM := func(x step) measured { return x.m }
	for rep := range c.Reps {
		x := retake(ctx, c, "s3-state: no-op", noopStep(jobPath, 0), stepM, &retaken)
		f := retake(ctx, c, "s3-state: find | sort", findStep(input), stepM, &retaken)
		logf("s3-state: no-op %d: %s %s, %d requests; find | sort %s", rep+1, secs(x.m.Wall), x.m.status(), x.reqs.total(), secs(f.m.Wall))
		st := "ok"
		if x.m.Err != nil {
			st = describeErr(x.m, x.m.Err)
			s.Problems = append(s.Problems, "S3-state no-op run: "+st)
		} else {
			noops, reqs = append(noops, x.m.Wall), append(reqs, int64(x.reqs.total()))
		}
		if f.m.Err == nil {
			finds = append(finds, f.m.Wall)
		}
		each = append(each, []string{fmt.Sprintf("no-op run %d", rep+1), secs(x.m.Wall) + busyNote(x.m), mb(x.m.PeakRSS),
			fmt.Sprintf("%d (%s)", x.reqs.total(), x.reqs), st},
			[]string{fmt.Sprintf("find | sort %d", rep+1), secs(f.m.Wall) + busyNote(f.m), "—", "—", "ok"})
	}
	b.h3(fmt.Sprintf("No-op runs over %s processed files", thousands(int64(n))))
	b.table([]string{"", "time", "peak RSS", "state requests", "status"}, each)
	if len(noops) > 0 && len(finds) > 0 {
		r := median(noops).Seconds() / median(finds).Seconds()
		noopRow.Tidemark, noopRow.Baseline, noopRow.Ratio = secs(median(noops)), secs(median(finds))+" (find | sort)", ratio(r)
		noopRow.Result = passFail(r <= c.S3StateTarget)
		reqRow.Tidemark, reqRow.Result = fmt.Sprint(medianInt(reqs)), "—"
	}

	// Commit latency, in process: commits of 10 files over the state.
	if lat, err := commitLatency(ctx, openState, "small/", j.Name, c.Reps*3); err != nil {
		s.Problems = append(s.Problems, "S3-state commit latency: "+err.Error())
	} else {
		commitRow.Tidemark, commitRow.Result = secs(median(lat)), "—"
		b.p(fmt.Sprintf("Commit latency: %d commits of 10 files each over the job's state, through the store API in the harness "+
			"(acquire the lease once, then BeginRun and Commit each time): median %s, fastest %s, slowest %s.",
			len(lat), secs(median(lat)), secs(slices.Min(lat)), secs(slices.Max(lat))))
	}

	// 1M: the state written through the store API.
	bigInput := filepath.Join(base, "input-big")
	logf("s3-state: linking %s files", thousands(int64(big)))
	if err := linkTree(bigInput, c.S3StateBigDirs, c.S3StateBigPerDir); err != nil {
		return notMeasured("Could not generate the 1M input: " + err.Error())
	}
	bj := jobFile{Name: "bench-s3-state-big", Source: bigInput, Sink: filepath.Join(base, "out-big"), BoundedFiles: 1000}
	bigJob, err := writeStateJob(filepath.Join(base, "job-big"), bj, "s3://"+stateBucket+"/big/")
	if err != nil {
		return notMeasured(err.Error())
	}
	if _, _, err := tidemarkRunWith(ctx, c, bigJob, "big-first", env, gw.cpu); err != nil {
		return notMeasured("The first run (bounded_files: 1000) over the 1M input failed: " + err.Error())
	}
	logf("s3-state: writing %s file records through the store API", thousands(int64(big)))
	fillStart := time.Now()
	if err := fillState(ctx, openState, "big/", bj.Name, bigInput); err != nil {
		return notMeasured("Could not write the 1M state: " + err.Error())
	}
	fill := time.Since(fillStart)
	b.h3(fmt.Sprintf("No-op runs over %s processed files", thousands(int64(big))))
	b.p(fmt.Sprintf("Input: %s files in %d folders (each folder's files hard links to one tiny CSV), read by a job with "+
		"`state: s3://%s/big/` and `bounded_files: 1000`. Its first run reads 1,000 files; the harness then records the "+
		"other files through the store API, as commits of 100,000 records each (%s), so the state holds every file: "+
		"each no-op run lists them all and merges the listing against the %s recorded identities.",
		thousands(int64(big)), c.S3StateBigDirs, stateBucket, secs(fill), thousands(int64(big))))
	var bigEach [][]string
	var bigTimes, bigFinds []time.Duration
	var bigReqs, bigRSS []int64
	for rep := range c.Reps {
		x := retake(ctx, c, "s3-state: 1M no-op", noopStep(bigJob, 0), stepM, &retaken)
		f := retake(ctx, c, "s3-state: 1M find | sort", findStep(bigInput), stepM, &retaken)
		logf("s3-state: 1M no-op %d: %s %s, %s, %d requests", rep+1, secs(x.m.Wall), x.m.status(), mb(x.m.PeakRSS), x.reqs.total())
		st := "ok"
		if x.m.Err != nil {
			st = describeErr(x.m, x.m.Err)
			s.Problems = append(s.Problems, "S3-state no-op run over 1M files: "+st)
		} else {
			bigTimes, bigReqs, bigRSS = append(bigTimes, x.m.Wall), append(bigReqs, int64(x.reqs.total())), append(bigRSS, x.m.PeakRSS)
		}
		if f.m.Err == nil {
			bigFinds = append(bigFinds, f.m.Wall)
		}
		bigEach = append(bigEach, []string{fmt.Sprintf("no-op run %d", rep+1), secs(x.m.Wall) + busyNote(x.m), mb(x.m.PeakRSS),
			fmt.Sprintf("%d (%s)", x.reqs.total(), x.reqs), st},
			[]string{fmt.Sprintf("find | sort %d", rep+1), secs(f.m.Wall) + busyNote(f.m), "—", "—", "ok"})
	}
	b.table([]string{"", "time", "peak RSS", "state requests", "status"}, bigEach)
	if len(bigTimes) > 0 {
		peak := slices.Max(bigRSS)
		bigRow.Tidemark = fmt.Sprintf("%s, %d requests, %s", secs(median(bigTimes)), medianInt(bigReqs), mb(peak))
		if len(bigFinds) > 0 {
			bigRow.Baseline = secs(median(bigFinds)) + " (find | sort)"
			bigRow.Ratio = ratio(median(bigTimes).Seconds() / median(bigFinds).Seconds())
		}
		bigRow.Result = passFail(peak < c.S3StateRSSTarget)
	}
	if st, err := stateStats(ctx, openState, "big/"); err == nil {
		b.p(fmt.Sprintf("The state of %s files: %s in %d objects, of which %d file-record segments of %s (%.0f B/file).",
			thousands(int64(big)), mb(st["bytes"]), st["objects"], st["segments"], mb(st["segment_bytes"]), float64(st["segment_bytes"])/float64(big)))
	}
	if retaken > 0 {
		b.p(fmt.Sprintf("%d sample(s) disturbed by other processes were thrown away and taken again (not shown).", retaken))
	}
	summary()
	return s
}

// writeStateJob writes the job file with its state at state.
func writeStateJob(dir string, j jobFile, state string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "job.yaml")
	return p, os.WriteFile(p, []byte("state: "+strconv.Quote(state)+"\n"+j.yaml()), 0o644)
}

// stateStats reports the size of the S3 state at prefix.
func stateStats(ctx context.Context, open func(string) (*s3store.Store, error), prefix string) (map[string]int64, error) {
	st, err := open(prefix)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Stats(ctx)
}

// linkTree makes dirs folders of perDir files, each folder's files hard
// links to its first (a tiny CSV).
func linkTree(dir string, dirs, perDir int) error {
	g := newOrderGen(17, 0)
	for d := range dirs {
		sub := filepath.Join(dir, fmt.Sprintf("d%04d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		first := filepath.Join(sub, "f0000.csv")
		if _, err := writeTiny(first, g, nil); err != nil {
			return err
		}
		for f := 1; f < perDir; f++ {
			if err := os.Link(first, filepath.Join(sub, fmt.Sprintf("f%04d.csv", f))); err != nil && !os.IsExist(err) {
				return err
			}
		}
	}
	return nil
}

// fillState records every file under dir that the job's state does not
// hold yet, in commits of 100,000 records under a lease of the harness's,
// each identity taken as the local source takes it (path below the root,
// size, mtime in nanoseconds). A recorded file is checked to match.
func fillState(ctx context.Context, open func(string) (*s3store.Store, error), prefix, job, dir string) error {
	st, err := open(prefix)
	if err != nil {
		return err
	}
	defer st.Close()
	have := map[string]bookmark.File{}
	for f, err := range st.Files(ctx, job, "orders") {
		if err != nil {
			return err
		}
		have[f.Path] = f
	}
	if len(have) == 0 {
		return fmt.Errorf("the first run recorded no files")
	}
	var batch []store.FileRecord
	checked := false
	l, err := st.AcquireLease(ctx, job, store.Holder{ID: "bench-fill", Host: "bench"}, time.Hour)
	if err != nil {
		return err
	}
	defer st.ReleaseLease(context.WithoutCancel(ctx), l)
	commit := func() error {
		if len(batch) == 0 {
			return nil
		}
		h, err := st.Head(ctx, job)
		if err != nil {
			return err
		}
		states, err := st.SourceStates(ctx, job)
		if err != nil {
			return err
		}
		r, err := st.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: fmt.Sprintf("bench-fill-%d", h.Version+1), Host: "bench"})
		if err != nil {
			return err
		}
		r.Status = store.StatusSucceeded
		_, err = st.Commit(ctx, store.Commit{Job: job, Token: l.Token, BaseVersion: h.Version, Advance: true, Run: r,
			Sources: states, Added: batch})
		batch = batch[:0]
		return err
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		f := bookmark.File{Path: filepath.ToSlash(rel), Size: info.Size(), MTime: info.ModTime().UnixNano()}
		if old, ok := have[f.Path]; ok {
			if !checked && old != f {
				return fmt.Errorf("the source recorded %+v, the harness makes %+v: not the same identity", old, f)
			}
			checked = true
			return nil
		}
		batch = append(batch, store.FileRecord{Ctx: "orders", File: f})
		if len(batch) == 100_000 {
			return commit()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return commit()
}

// commitLatency times n commits of 10 new file records each on the job's
// state, after taking its lease once.
func commitLatency(ctx context.Context, open func(string) (*s3store.Store, error), prefix, job string, n int) ([]time.Duration, error) {
	st, err := open(prefix)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	l, err := st.AcquireLease(ctx, job, store.Holder{ID: "bench-latency", Host: "bench"}, time.Hour)
	if err != nil {
		return nil, err
	}
	defer st.ReleaseLease(context.WithoutCancel(ctx), l)
	var out []time.Duration
	for i := range n {
		h, err := st.Head(ctx, job)
		if err != nil {
			return nil, err
		}
		states, err := st.SourceStates(ctx, job)
		if err != nil {
			return nil, err
		}
		r, err := st.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: fmt.Sprintf("bench-latency-%d", i), Host: "bench"})
		if err != nil {
			return nil, err
		}
		r.Status = store.StatusSucceeded
		c := store.Commit{Job: job, Token: l.Token, BaseVersion: h.Version, Advance: true, Run: r, Sources: states}
		for k := range 10 {
			c.Added = append(c.Added, store.FileRecord{Ctx: "orders", File: bookmark.File{Path: fmt.Sprintf("zz-latency/%03d-%02d.csv", i, k), Size: 1}})
		}
		start := time.Now()
		if _, err := st.Commit(ctx, c); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}
