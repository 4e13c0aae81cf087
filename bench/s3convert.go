package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchS3Convert measures scenario 1's conversion with input and output on
// versitygw over loopback against the same job on local disk, side by
// side: the cost of going through S3.
func benchS3Convert(ctx context.Context, c *config) section {
	s := section{Title: "4. CSV → Parquet on S3 (versitygw) against local disk"}
	b := &s.Body
	row := summaryRow{Measure: fmt.Sprintf("CSV → Parquet on S3 (versitygw, loopback), %d files × %s rows: throughput",
		c.ConvertFiles, thousands(c.ConvertRows)), Tidemark: "—", Baseline: "—", Ratio: "—",
		Target: fmt.Sprintf("≥ %.2f× local disk", c.S3ConvertTarget), Result: "not measured"}
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = []summaryRow{row}
		return s
	}
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	if err == nil {
		err = warm(ds.Files)
	}
	if err != nil {
		return notMeasured("Could not prepare the input: " + err.Error())
	}

	base := filepath.Join(c.work, "s3-convert")
	gw, err := startGateway(ctx, filepath.Join(base, "gw"))
	if err != nil {
		return notMeasured("versitygw could not be started: " + err.Error())
	}
	defer gw.stop()
	const inBucket, outBucket, prefix = "incoming", "lake", "convert/"
	if err := gw.createBuckets(ctx, inBucket, outBucket); err != nil {
		return notMeasured(err.Error())
	}
	// The input objects are written straight into versitygw's folder, with
	// the ETag a PUT would store, as the e2e tests seed objects: the
	// upload is not what is measured.
	seedStart := time.Now()
	for _, f := range ds.Files {
		data, err := os.ReadFile(f)
		if err == nil {
			err = gw.files.WriteObjectFile(inBucket, prefix+filepath.Base(f), data)
		}
		if err != nil {
			return notMeasured("Could not put the input into versitygw's folder: " + err.Error())
		}
	}
	seedTime := time.Since(seedStart)
	env := gw.environ(gw.endpoint, base)

	localJob := func(dir string) jobFile {
		return jobFile{Name: "bench-s3-convert", Source: ds.Dir, Sink: filepath.Join(dir, "out")}
	}
	s3Job := func(rep string) jobFile {
		return jobFile{Name: "bench-s3-convert", Source: "s3://" + inBucket + "/" + prefix,
			Sink: fmt.Sprintf("s3://%s/convert-%s/", outBucket, rep)}
	}
	side := func(label, kind string) *convertSide {
		s3 := kind == "s3"
		sd := &convertSide{label: label}
		sd.run = func(rep int) convertSample {
			dir := filepath.Join(base, fmt.Sprintf("%s-%d", kind, rep))
			defer os.RemoveAll(dir)
			j, out, runEnv, servers := localJob(dir), filepath.Join(dir, "out"), []string(nil), (func() time.Duration)(nil)
			if s3 {
				j = s3Job(fmt.Sprint(rep))
				out = filepath.Join(gw.dir, outBucket, fmt.Sprintf("convert-%d", rep))
				runEnv, servers = env, gw.cpu
				defer os.RemoveAll(out)
			}
			jobPath, err := writeJob(dir, j)
			if err != nil {
				return convertSample{err: err}
			}
			m, res, err := tidemarkRunWith(ctx, c, jobPath, "run", runEnv, servers)
			m.Err = err
			x := convertSample{m: m, err: err, reported: res.Sinks["out"].Rows}
			if err == nil {
				x.outFiles, x.outRows, x.outBytes, x.checkErr = outputRows(ctx, c, out)
			}
			return x
		}
		return sd
	}
	local := side("tidemark, local disk", "local")
	remote := side("tidemark, S3 (versitygw)", "s3")
	sides := []*convertSide{local, remote}
	runRotated(ctx, c, "s3-convert", sides)
	checkConvertSamples(&s, "CSV → Parquet on S3", sides, ds.Rows)

	// Where the S3 run's time goes: one more run, not measured, through a
	// proxy that records each request.
	var trace [][]string
	var traceWall time.Duration
	if proxy, err := startCountingProxy(gw.endpoint); err == nil {
		dir := filepath.Join(base, "traced")
		out := filepath.Join(gw.dir, outBucket, "convert-traced")
		if jobPath, err := writeJob(dir, s3Job("traced")); err == nil {
			m, _, err := tidemarkRunWith(ctx, c, jobPath, "run", gw.environ(proxy.url, base), gw.cpu)
			_, reqs := proxy.takeAll()
			if err == nil {
				trace, traceWall = timeline(m.Start, reqs), m.Wall
			}
		}
		proxy.close()
		os.RemoveAll(dir)
		os.RemoveAll(out)
	}

	localT, _ := local.times()
	remoteT, _ := remote.times()
	localMed, remoteMed := median(localT), median(remoteT)
	if remoteMed > 0 {
		row.Tidemark = rowsPerSec(ds.Rows, remoteMed)
	} else {
		row.Tidemark, row.Result = "failed", "**FAIL** (the S3 run did not complete)"
	}
	if localMed > 0 {
		row.Baseline = rowsPerSec(ds.Rows, localMed) + " (the same job on local disk)"
	}
	if localMed > 0 && remoteMed > 0 {
		r := localMed.Seconds() / remoteMed.Seconds()
		row.Ratio = ratio(r)
		row.Result = passFail(r >= c.S3ConvertTarget)
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: scenario 1's %d CSV files (%s rows, %s). For the S3 side they are objects `s3://%s/%s…` "+
		"on a versitygw %s (`versitygw --port 127.0.0.1:PORT --quiet --keep-alive posix DIR`, started by the harness, "+
		"its folder on the same disk), put there by writing the files into its posix folder with the ETag a PUT stores "+
		"(%s, not measured). tidemark reaches it through the standard AWS variables in its environment "+
		"(`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL=http://127.0.0.1:PORT`), so it "+
		"downloads the inputs into its spill folder (the system temp folder, same disk) and uploads the output "+
		"to its final key as a multipart upload left incomplete (the file's parts go up while the engine writes it), "+
		"then publishes it by completing the upload.",
		len(ds.Files), thousands(ds.Rows), mb(ds.Bytes), inBucket, prefix, gw.version, secs(seedTime)))
	b.p("The two jobs differ only in their paths; each repetition starts from a fresh state and an empty sink:")
	b.code("yaml", localJob(filepath.Join(base, "local-N")).yaml()+"\n"+s3Job("N").yaml())
	b.p(fmt.Sprintf("Median of %d repetitions, alternating which side runs first. versitygw's CPU time during each S3 run "+
		"is part of the work measured: it is not counted as other processes' load.", c.Reps))
	var rows [][]string
	for _, sd := range sides {
		ts, rss := sd.times()
		var each []string
		var out string
		var gwCPU []time.Duration
		for _, x := range sd.samples {
			if x.err != nil {
				each = append(each, x.m.status())
				continue
			}
			each = append(each, secs(x.m.Wall)+busyNote(x.m))
			out = fmt.Sprintf("%d file(s), %s", x.outFiles, mb(x.outBytes))
			gwCPU = append(gwCPU, x.m.ServerCPU)
		}
		cpu := "—"
		if sd == remote && len(gwCPU) > 0 {
			cpu = secs(median(gwCPU))
		}
		if len(ts) == 0 {
			rows = append(rows, []string{sd.label, "—", "—", "—", "—", "—", cpu, orDash(strings.Join(each, ", ")), fmt.Sprint(sd.retaken)})
			continue
		}
		med := median(ts)
		rows = append(rows, []string{sd.label, secs(med), rowsPerSec(ds.Rows, med), mbPerSec(ds.Bytes, med), mb(medianInt(rss)),
			out, cpu, strings.Join(each, ", "), fmt.Sprint(sd.retaken)})
	}
	b.table([]string{"", "median time", "rows/s", "MB/s", "peak RSS", "output", "versitygw CPU", "each repetition", "disturbed, retaken"}, rows)
	if localMed > 0 && remoteMed > 0 {
		b.p(fmt.Sprintf("Throughput on S3 / on local disk: %s. Target ≥ %.2f×: %s.", row.Ratio, c.S3ConvertTarget, row.Result))
	}
	if trace != nil {
		b.p(fmt.Sprintf("Where the S3 run's time goes: one more S3 run (%s, not counted above) went through a proxy in the "+
			"harness that records each request. By operation, in order of first appearance, with times in seconds after "+
			"the process started; the gaps between them are the run's local work (planning, then the conversion between "+
			"the last download and the first upload):", secs(traceWall)))
		b.table([]string{"operation", "requests", "bytes", "first started", "last ended", "span"}, trace)
	}
	return s
}
