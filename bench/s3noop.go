package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// benchS3Noop measures a run with nothing new over a prefix of many
// processed objects on versitygw, listing the prefix in full against
// `listing: ordered` (StartAfter the last key read): time, and requests
// counted by a proxy in front of versitygw.
func benchS3Noop(ctx context.Context, c *config) section {
	s := section{Title: "5. No-op run over many objects on S3: full listing against listing: ordered"}
	b := &s.Body
	label := thousands(int64(c.S3Objects))
	timeRow := summaryRow{Measure: fmt.Sprintf("No-op run over %s objects on S3: time, `listing: ordered` vs full", label),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	listRow := summaryRow{Measure: fmt.Sprintf("No-op run over %s objects on S3: ListObjectsV2 requests, ordered vs full", label),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: fmt.Sprintf("≤ %d (ordered)", c.S3ListTarget), Result: "not measured"}
	firstRow := summaryRow{Measure: fmt.Sprintf("First run: %s new objects on S3 in one run", label),
		Tidemark: "—", Baseline: "—", Ratio: "—", Target: "report", Result: "not measured"}
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = []summaryRow{firstRow, timeRow, listRow}
		return s
	}
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}

	base := filepath.Join(c.work, "s3-noop")
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
	const inBucket, outBucket, prefix = "incoming", "lake", "sales/"
	if err := gw.createBuckets(ctx, inBucket, outBucket); err != nil {
		return notMeasured(err.Error())
	}

	// Dated keys that sort in arrival order, perDay a day, as `listing:
	// ordered` wants: sales/2026/MM/DD/<seconds of day>-<n>.csv. Each
	// day's first object is written into versitygw's folder with its ETag;
	// the day's others are hard links to it (the same bytes and ETag, at
	// the cost of a directory entry).
	key := func(i int) string {
		day := i / c.S3PerDay
		return fmt.Sprintf("%s2026/%02d/%02d/%05d-%06d.csv", prefix, 1+day/28, 1+day%28, (i%c.S3PerDay)*86400/c.S3PerDay, i)
	}
	logf("s3-noop: writing %s objects into versitygw's folder", label)
	genStart := time.Now()
	g := newOrderGen(11, 0)
	var bodyBytes int64
	for i := range c.S3Objects {
		first := i - i%c.S3PerDay
		var err error
		if i == first {
			body := g.next(g.next([]byte(ordersHeader)))
			bodyBytes = int64(len(body))
			err = gw.files.WriteObjectFile(inBucket, key(i), body)
		} else {
			err = gw.files.LinkObjectFile(inBucket, key(first), key(i))
		}
		if err != nil {
			return notMeasured("Could not write the objects: " + err.Error())
		}
	}
	genTime := time.Since(genStart)
	days := (c.S3Objects + c.S3PerDay - 1) / c.S3PerDay

	jobDir := filepath.Join(base, "job")
	job := func(listing string) jobFile {
		return jobFile{Name: "bench-s3-noop", Source: "s3://" + inBucket + "/" + prefix, Sink: "s3://" + outBucket + "/noop/", Listing: listing}
	}
	env := gw.environ(proxy.url, base)
	run := func(listing, logName string) (measured, runResult, requestCounts, error) {
		jobPath, err := writeJob(jobDir, job(listing))
		if err != nil {
			return measured{Err: err}, runResult{}, nil, err
		}
		proxy.take()
		m, res, err := tidemarkRunWith(ctx, c, jobPath, logName, env, gw.cpu)
		return m, res, proxy.take(), err
	}

	b.p(fmt.Sprintf("Input: %s objects of %d bytes (a CSV header and 2 rows) under `s3://%s/%s`, %s a day in %d dated "+
		"folders whose keys sort in arrival order (`%s` … `%s`), on a versitygw %s started by the harness as in scenario 4. "+
		"They are written straight into versitygw's posix folder (each day's first object with the ETag a PUT stores, "+
		"the day's others as hard links to it) in %s, not measured. tidemark reaches versitygw through a counting proxy "+
		"in the harness (the operation of each request named as `internal/s3test` names it), so every request below was "+
		"counted.", label, bodyBytes, inBucket, prefix, thousands(int64(c.S3PerDay)), days, key(0), key(c.S3Objects-1),
		gw.version, secs(genTime)))
	b.p("One job and one state for both listings: its first run, with `listing: ordered`, reads every object and records " +
		"each identity and the last key; each later run rewrites the job file with `listing: full` or `listing: ordered` " +
		"(the listing is not part of the source's fingerprint, so the bookmark carries over). A full listing pages through " +
		"the whole prefix (1,000 keys a ListObjectsV2 request) and merges it against the recorded identities; an ordered " +
		"one asks only for keys after the last one read.")
	b.code("yaml", job("ordered").yaml())

	// The first run: every object is new.
	logf("s3-noop: first run over %s objects (cap %s)", label, c.Timeout)
	first, firstRes, firstReqs, firstErr := run("ordered", "first")
	logf("s3-noop: first run: %s %s; requests: %s", secs(first.Wall), first.status(), firstReqs)
	b.h3("First run")
	src := firstRes.Sources["orders"]
	if firstErr != nil {
		firstRow.Tidemark = first.status()
		firstRow.Result = "**failed**"
		if first.TimedOut {
			firstRow.Result = "**did not finish**"
		}
		b.table([]string{"", "time", "read", "peak RSS", "requests", "status"}, [][]string{
			{"one run, all objects", secs(first.Wall), "—", mb(first.PeakRSS), firstReqs.String(), describeErr(first, firstErr)}})
		s.Problems = append(s.Problems, fmt.Sprintf("The first run over %s new objects on S3: %s", label, describeErr(first, firstErr)))
		return notMeasured("The first run did not complete, so the no-op runs were not measured.")
	}
	firstRow.Tidemark, firstRow.Result = secs(first.Wall), "done"
	b.table([]string{"", "time", "read", "peak RSS", "versitygw CPU", "requests", "status"}, [][]string{
		{"one run, all objects", secs(first.Wall), fmt.Sprintf("%s objects, %s rows", thousands(src.Files), thousands(src.Rows)),
			mb(first.PeakRSS), secs(first.ServerCPU), firstReqs.String(), "ok"}})
	if src.Files != int64(c.S3Objects) {
		s.Problems = append(s.Problems, fmt.Sprintf("The first run over %s objects on S3 reported reading %d objects", label, src.Files))
	}
	s.Problems = append(s.Problems, checkOutput(ctx, c, "S3 no-op scenario, first run", filepath.Join(gw.dir, outBucket, "noop"), int64(2*c.S3Objects))...)

	// No-op runs, alternating the listing.
	type noop struct {
		m    measured
		reqs requestCounts
	}
	var (
		each    [][]string
		retaken int
		times   = map[string][]time.Duration{}
		lists   = map[string][]int64{}
		srcList = map[string][]int64{}
		totals  = map[string][]int64{}
		n       int
	)
	measure := func(listing string, rep int) {
		x := retake(ctx, c, fmt.Sprintf("s3-noop: listing %s, run %d", listing, rep+1), func() noop {
			n++
			m, res, reqs, err := run(listing, fmt.Sprintf("run-%d", n))
			if err == nil && res.Sources["orders"].Files != 0 {
				err = fmt.Errorf("read %d objects, want 0", res.Sources["orders"].Files)
			}
			m.Err = err
			return noop{m, reqs}
		}, func(x noop) measured { return x.m }, &retaken)
		logf("s3-noop: listing %s, run %d: %s %s%s; requests: %s", listing, rep+1, secs(x.m.Wall), x.m.status(), busyNote(x.m), x.reqs)
		st := "ok"
		if x.m.Err != nil {
			st = describeErr(x.m, x.m.Err)
			s.Problems = append(s.Problems, fmt.Sprintf("S3 no-op run with listing: %s, run %d: %s", listing, rep+1, st))
		} else {
			times[listing] = append(times[listing], x.m.Wall)
			lists[listing] = append(lists[listing], int64(x.reqs.op("", "ListObjectsV2")))
			srcList[listing] = append(srcList[listing], int64(x.reqs.op(inBucket, "ListObjectsV2")))
			totals[listing] = append(totals[listing], int64(x.reqs.total()))
		}
		each = append(each, []string{fmt.Sprintf("listing: %s, run %d", listing, rep+1), secs(x.m.Wall) + busyNote(x.m),
			mb(x.m.PeakRSS), secs(x.m.ServerCPU), fmt.Sprint(x.reqs.op(inBucket, "ListObjectsV2")),
			fmt.Sprint(x.reqs.total()), x.reqs.String(), st})
	}
	for rep := range c.Reps {
		if rep%2 == 0 {
			measure("full", rep)
			measure("ordered", rep)
		} else {
			measure("ordered", rep)
			measure("full", rep)
		}
	}

	fullMed, ordMed := median(times["full"]), median(times["ordered"])
	fullLists, ordLists := medianInt(lists["full"]), medianInt(lists["ordered"])
	if ordMed > 0 {
		timeRow.Tidemark = secs(ordMed) + " (ordered)"
		listRow.Tidemark = fmt.Sprintf("%d (ordered; %d on the source)", ordLists, medianInt(srcList["ordered"]))
	}
	if fullMed > 0 {
		timeRow.Baseline = secs(fullMed) + " (full listing)"
		listRow.Baseline = fmt.Sprintf("%s (full listing; %s on the source)", thousands(fullLists), thousands(medianInt(srcList["full"])))
	}
	if ordMed > 0 && fullMed > 0 {
		timeRow.Ratio = ratio(ordMed.Seconds() / fullMed.Seconds())
		timeRow.Result = "—"
		if fullLists > 0 {
			listRow.Ratio = ratio(float64(ordLists) / float64(fullLists))
		}
	}
	if ordMed > 0 {
		listRow.Result = passFail(ordLists <= int64(c.S3ListTarget))
	}
	s.Summary = []summaryRow{firstRow, timeRow, listRow}

	b.h3("No-op runs")
	b.p(fmt.Sprintf("Then %d no-op runs with each listing, alternating (each must read 0 objects). Requests are all those "+
		"the run made, on the source and the sink (whose staging prefix every run checks); versitygw's CPU time is part "+
		"of the work measured, not counted as other processes' load.", c.Reps))
	b.table([]string{"", "time", "peak RSS", "versitygw CPU", "ListObjectsV2 on the source", "requests", "by operation", "status"}, each)
	if retaken > 0 {
		b.p(fmt.Sprintf("%d sample(s) disturbed by other processes were thrown away and taken again (not shown).", retaken))
	}
	b.table([]string{"", "median time", "ListObjectsV2 (source + sink)", "all requests"}, [][]string{
		{"listing: full", secs(fullMed), thousands(fullLists), thousands(medianInt(totals["full"]))},
		{"listing: ordered", secs(ordMed), thousands(ordLists), thousands(medianInt(totals["ordered"]))},
	})
	if ordMed > 0 && fullMed > 0 {
		b.p(fmt.Sprintf("The ordered no-op run takes %s of the full one's time. Target (issue 3's test): a no-op run with "+
			"`listing: ordered` makes at most %d ListObjectsV2 requests: %s.", timeRow.Ratio, c.S3ListTarget, listRow.Result))
	}
	return s
}
