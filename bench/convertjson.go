package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// benchConvertJSON measures JSON Lines → Parquet: tidemark under its
// default schema_evolution (fail, which reads every object's keys once so
// that a key the schema lacks fails the run instead of being dropped),
// tidemark under none (which skips that pass and ignores new keys), and
// DuckDB alone over the same files, sniffing the schema and told it.
func benchConvertJSON(ctx context.Context, c *config) section {
	s := section{Title: "16. JSON Lines → Parquet, and the cost of checking every object's keys"}
	b := &s.Body
	measure := fmt.Sprintf("JSON Lines → Parquet, %d files × %s rows: throughput", c.ConvertFiles, thousands(c.ConvertRows))
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	plain, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	var ds dataset
	if err == nil {
		ds, err = cachedJSON(plain, filepath.Join(c.DataDir, "cache", name+"-json"))
	}
	list := filepath.Join(c.work, name+"-json.list")
	if err == nil {
		err = warmAndList(ds, list)
	}
	if err != nil {
		b.p("Could not prepare the input: " + err.Error())
		s.Summary = []summaryRow{{measure, "—", "—", "—", "report", "not measured"}}
		return s
	}

	tmSide := func(label, evolution string) *convertSide {
		return tidemarkSide(ctx, c, label, c.bin.tidemark, "convertjson-"+evolution,
			jobFile{Name: "bench-convert-json", Source: ds.Dir, Format: "json", SchemaEvolution: evolution})
	}
	fail := tmSide("tidemark (schema_evolution: fail, the default)", "fail")
	none := tmSide("tidemark (schema_evolution: none)", "none")
	sniffed := duckdbSide(ctx, c, baselineVariant{label: "DuckDB alone, tidemark's settings", dir: "duckdb-settings", sets: engineSettings, format: "json"}, list, "convertjson")
	given := duckdbSide(ctx, c, baselineVariant{label: "DuckDB alone, tidemark's settings, schema given (reference)", dir: "duckdb-schema",
		sets: engineSettings, schema: true, format: "json"}, list, "convertjson")
	var sides []*convertSide
	if c.bin.tidemark != "" {
		sides = append(sides, fail, none)
	}
	sides = append(sides, sniffed, given)
	runRotated(ctx, c, "convert-json", sides)
	checkConvertSamples(&s, "JSON Lines → Parquet", sides, ds.Rows)

	med := func(side *convertSide) time.Duration {
		ts, _ := side.times()
		return median(ts)
	}
	row := summaryRow{Measure: measure, Target: "report", Ratio: "—", Result: "not measured", Tidemark: "failed", Baseline: "failed"}
	if c.bin.tidemark == "" {
		row.Tidemark = "not built"
	} else if m := med(fail); m > 0 {
		row.Tidemark = rowsPerSec(ds.Rows, m)
	}
	if m := med(sniffed); m > 0 {
		row.Baseline = rowsPerSec(ds.Rows, m) + " (" + sniffed.label + ")"
		if t := med(fail); t > 0 {
			row.Ratio = ratio(m.Seconds() / t.Seconds())
			row.Result = "reported"
		}
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: the rows of scenario 1 (%d files of %s rows, %s rows) written as JSON Lines, one object per "+
		"line with the same five columns (`ts` as a string), into `%s`: %s.", len(ds.Files), thousands(c.ConvertRows),
		thousands(ds.Rows), c.rel(ds.Dir), mb(ds.Bytes)))
	b.p("**tidemark**: `tidemark run job.yaml --json` with a fresh state and an empty sink folder each repetition, so " +
		"each run infers the schema from a sample, as a first run does. Under `schema_evolution: fail` (the default) it " +
		"then reads every object's key list once: a key the schema lacks fails the run (a JSON reader given a schema " +
		"drops it). Under `none` that pass is skipped. Both check that every value converts to its column's type " +
		"without loss (an integer column refuses `1.5`). The job:")
	b.code("yaml", jobFile{Name: "bench-convert-json", Source: ds.Dir, Sink: filepath.Join(c.work, "convertjson-fail-N", "out"), Format: "json"}.yaml())
	b.p("**DuckDB alone**: `bench/duckdbcopy -format json`, one COPY over the same files with tidemark's settings, " +
		"sniffing the schema (the work a first run does), and told it (`auto_detect=false`, for reference). Neither " +
		"checks keys or conversions.")
	b.code("sql", sqlOf([]*convertSide{sniffed, given}))
	b.p(fmt.Sprintf("Median of %d repetitions, rotating which side runs first.", c.Reps))
	var rows [][]string
	for _, side := range []*convertSide{fail, none, sniffed, given} {
		ts, rss := side.times()
		each := side.eachRep()
		if len(ts) == 0 {
			rows = append(rows, []string{side.label, "—", "—", "—", "—", orDash(strings.Join(each, ", ")), fmt.Sprint(side.retaken)})
			continue
		}
		m := median(ts)
		rows = append(rows, []string{side.label, secs(m), rowsPerSec(ds.Rows, m), mbPerSec(ds.Bytes, m), mb(medianInt(rss)),
			strings.Join(each, ", "), fmt.Sprint(side.retaken)})
	}
	b.table([]string{"", "median time", "rows/s", "MB/s", "peak RSS", "each repetition", "disturbed, retaken"}, rows)
	if f, n := med(fail), med(none); f > 0 && n > 0 {
		b.p(fmt.Sprintf("The key check's cost: fail / none time %s (+%s).", ratio(f.Seconds()/n.Seconds()), secs(f-n)))
	}
	if f, d, g := med(fail), med(sniffed), med(given); f > 0 && d > 0 && g > 0 {
		b.p(fmt.Sprintf("Throughput tidemark (fail) / DuckDB alone: %s sniffing, %s told the schema.",
			ratio(d.Seconds()/f.Seconds()), ratio(g.Seconds()/f.Seconds())))
	}
	return s
}

// cachedJSON returns the JSON Lines copy of the CSV dataset plain under
// dir, making it once.
func cachedJSON(plain dataset, dir string) (dataset, error) {
	return cachedCopy(plain, dir, "writing as JSON Lines", func(src string) (string, int64, error) {
		dst := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".csv")+".json")
		size, err := csvToJSONLines(src, dst)
		return dst, size, err
	})
}

// csvToJSONLines writes the generated orders file src (its header
// ordersHeader, no quoting) as JSON Lines: numbers as numbers, text and
// the timestamp as strings.
func csvToJSONLines(src, dst string) (size int64, err error) {
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
	sc := bufio.NewScanner(bufio.NewReaderSize(in, 1<<20))
	w := bufio.NewWriterSize(out, 1<<20)
	names := strings.Split(strings.TrimSpace(ordersHeader), ",")
	quoted := map[string]bool{"product": true, "ts": true}
	first := true
	buf := make([]byte, 0, 256)
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != len(names) {
			return 0, fmt.Errorf("%s: a row of %d fields, want %d", src, len(fields), len(names))
		}
		buf = append(buf[:0], '{')
		for i, n := range names {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = append(buf, n...)
			buf = append(buf, '"', ':')
			if quoted[n] {
				buf = append(buf, '"')
				buf = append(buf, fields[i]...)
				buf = append(buf, '"')
			} else {
				buf = append(buf, fields[i]...)
			}
		}
		buf = append(buf, '}', '\n')
		w.Write(buf)
		size += int64(len(buf))
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return size, out.Close()
}
