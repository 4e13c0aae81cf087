package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// benchConvertGz measures gzip-compressed CSV → Parquet: tidemark, which
// checks every compressed input to its end (trailer and CRC) alongside the
// engine, against the same conversion without the check (-tidemark-before,
// a binary built from before the check), and DuckDB alone over the same
// files. The ratio with/without is the check's cost.
func benchConvertGz(ctx context.Context, c *config) section {
	s := section{Title: "8. Compressed CSV (.gz) → Parquet: the cost of checking compressed input"}
	b := &s.Body
	measure := fmt.Sprintf("CSV.gz → Parquet, %d files × %s rows: throughput with the check", c.ConvertFiles, thousands(c.ConvertRows))
	target := fmt.Sprintf("≥ %.2f× without the check", c.ConvertGzTarget)
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	plain, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	var ds dataset
	if err == nil {
		ds, err = cachedGzip(plain, filepath.Join(c.DataDir, "cache", name+"-gz"))
	}
	list := filepath.Join(c.work, name+"-gz.list")
	if err == nil {
		err = warmAndList(ds, list)
	}
	if err != nil {
		b.p("Could not prepare the input: " + err.Error())
		s.Summary = []summaryRow{{measure, "—", "—", "—", target, "not measured"}}
		return s
	}

	tmSide := func(label, bin string) *convertSide {
		return tidemarkSide(ctx, c, label, bin, "convertgz-"+strings.ReplaceAll(label, " ", "-"),
			jobFile{Name: "bench-convert-gz", Source: ds.Dir})
	}
	after := tmSide("tidemark", c.bin.tidemark)
	var before *convertSide
	sides := []*convertSide{}
	if c.bin.tidemark != "" {
		sides = append(sides, after)
	}
	if c.TidemarkBefore != "" {
		p, _ := filepath.Abs(c.TidemarkBefore)
		before = tmSide("tidemark without the check", p)
		sides = append(sides, before)
	}
	duck := duckdbSide(ctx, c, baselines[1], list, "convertgz")
	sides = append(sides, duck)
	runRotated(ctx, c, "convert-gz", sides)
	checkConvertSamples(&s, "CSV.gz → Parquet", sides, ds.Rows)

	// The check alone, in this process: one goroutine decompressing every
	// file to nowhere, as the run's check does.
	start := time.Now()
	var checkErr error
	for _, f := range ds.Files {
		if checkErr = gunzipAll(f); checkErr != nil {
			break
		}
	}
	checkTime := time.Since(start)

	med := func(side *convertSide) time.Duration {
		if side == nil {
			return 0
		}
		ts, _ := side.times()
		return median(ts)
	}
	row := summaryRow{Measure: measure, Target: target, Ratio: "—", Result: "not measured", Baseline: "not given (-tidemark-before)"}
	row.Tidemark = rowsPerSec(ds.Rows, med(after))
	if c.bin.tidemark == "" {
		row.Tidemark = "not built"
	}
	if mb := med(before); mb > 0 {
		row.Baseline = rowsPerSec(ds.Rows, mb) + " (tidemark without the check)"
		if ma := med(after); ma > 0 {
			r := mb.Seconds() / ma.Seconds()
			row.Ratio = ratio(r)
			row.Result = passFail(r >= c.ConvertGzTarget)
		}
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: the files of scenario 1 (%d CSV files of %s rows, %s rows, %s), each compressed with gzip "+
		"(klauspost/compress, default level) into `%s`: %s.", len(ds.Files), thousands(c.ConvertRows), thousands(ds.Rows),
		mb(plain.Bytes), c.rel(ds.Dir), mb(ds.Bytes)))
	b.p("**tidemark**: the job of scenario 1 over the .gz files; it reads them through DuckDB's own decompressor and " +
		"checks each one to its end (every member's trailer: CRC-32 and length) on its own goroutines alongside the " +
		"engine, so a truncated file fails the run. **tidemark without the check**: the same job run by the binary " +
		"given with `-tidemark-before` (built from the commit before the check). **DuckDB alone**: one COPY over the " +
		"same .gz files with tidemark's settings, as in scenario 1.")
	b.code("sql", duck.sql)
	cpuOf := func(side *convertSide) time.Duration {
		var cs []time.Duration
		if side != nil {
			for _, x := range side.samples {
				if x.err == nil {
					cs = append(cs, x.m.CPU)
				}
			}
		}
		return median(cs)
	}
	var rows [][]string
	for _, side := range sides {
		ts, _ := side.times()
		each := side.eachRep()
		if len(ts) == 0 {
			rows = append(rows, []string{side.label, "—", "—", "—", "—", orDash(strings.Join(each, ", ")), fmt.Sprint(side.retaken)})
			continue
		}
		m := median(ts)
		rows = append(rows, []string{side.label, secs(m), rowsPerSec(ds.Rows, m), mbPerSec(plain.Bytes, m), secs(cpuOf(side)),
			strings.Join(each, ", "), fmt.Sprint(side.retaken)})
	}
	b.table([]string{"", "median time", "rows/s", "MB/s (uncompressed)", "median CPU (user+sys)", "each repetition", "disturbed, retaken"}, rows)
	if checkErr != nil {
		s.Problems = append(s.Problems, "checking the .gz files alone: "+checkErr.Error())
	} else {
		b.p(fmt.Sprintf("The check alone (one goroutine decompressing every file to nowhere, not timed as a process): %s, "+
			"%s of uncompressed CSV.", secs(checkTime), mbPerSec(plain.Bytes, checkTime)))
	}
	if ma, mb := med(after), med(before); ma > 0 && mb > 0 {
		b.p(fmt.Sprintf("Throughput with the check / without: %s (target %s: %s).", ratio(mb.Seconds()/ma.Seconds()), target, row.Result))
	}
	if ca, cb := cpuOf(after), cpuOf(before); ca > 0 && cb > 0 {
		b.p(fmt.Sprintf("CPU time with the check / without: %s (+%s): the check's work, which on a machine with a "+
			"core to spare runs beside the engine's.", ratio(ca.Seconds()/cb.Seconds()), secs(ca-cb)))
	}
	if ma, md := med(after), med(duck); ma > 0 && md > 0 {
		b.p(fmt.Sprintf("Throughput tidemark / DuckDB alone over the same .gz files: %s.", ratio(md.Seconds()/ma.Seconds())))
	}
	return s
}

// cachedGzip returns the gzip-compressed copy of plain under dir, making it
// once.
func cachedGzip(plain dataset, dir string) (dataset, error) {
	return cachedCopy(plain, dir, "compressing", func(src string) (string, int64, error) {
		dst := filepath.Join(dir, filepath.Base(src)+".gz")
		n, err := gzipFile(src, dst)
		return dst, n, err
	})
}

// cachedCopy returns the copy of dataset plain under dir that convert
// makes of each of its files (returning the copy's path and size), making
// it once: the manifest, written last, says it is complete. The copy has
// plain's rows.
func cachedCopy(plain dataset, dir, doing string, convert func(src string) (string, int64, error)) (dataset, error) {
	manifest := dir + ".json"
	if ds, err := loadDataset(manifest); err == nil {
		return ds, nil
	}
	logf("%s %d files into %s", doing, len(plain.Files), dir)
	if err := os.RemoveAll(dir); err != nil {
		return dataset{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return dataset{}, err
	}
	ds := dataset{Version: genVersion, Dir: dir, Rows: plain.Rows}
	for _, f := range plain.Files {
		dst, n, err := convert(f)
		if err != nil {
			return dataset{}, err
		}
		ds.Files = append(ds.Files, dst)
		ds.Bytes += n
	}
	data, err := json.MarshalIndent(ds, "", "  ")
	if err != nil {
		return dataset{}, err
	}
	return ds, os.WriteFile(manifest, data, 0o644)
}

func gzipFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	w := gzip.NewWriter(out)
	if _, err := io.Copy(w, in); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	fi, err := out.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// gunzipAll decompresses a file to nowhere, as tidemark's check does.
func gunzipAll(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, zr)
	return err
}
