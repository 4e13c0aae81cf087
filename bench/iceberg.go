package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// benchIceberg measures CSV → Iceberg against CSV → Parquet through
// tidemark on the same files: both runs convert with the same engine and
// checks; the Iceberg sink adds its work after the engine (each staged
// file's schema and stats read, the table made, the snapshot committed to
// the catalog in the state store). The gap is that work.
func benchIceberg(ctx context.Context, c *config) section {
	s := section{Title: "17. CSV → Iceberg against CSV → Parquet"}
	b := &s.Body
	measure := fmt.Sprintf("CSV → Iceberg, %d files × %s rows: throughput", c.ConvertFiles, thousands(c.ConvertRows))
	const target = "≥ 0.90× CSV → Parquet"
	name := fmt.Sprintf("convert-%dx%d", c.ConvertFiles, c.ConvertRows)
	ds, err := cachedOrders(filepath.Join(c.DataDir, "cache"), name, c.ConvertFiles, c.ConvertRows, 0)
	if err == nil {
		err = warm(ds.Files)
	}
	if err != nil || c.bin.tidemark == "" {
		if err == nil {
			err = fmt.Errorf("tidemark was not built")
		}
		b.p("Could not prepare the input: " + err.Error())
		s.Summary = []summaryRow{{measure, "—", "—", "—", target, "not measured"}}
		return s
	}
	parquet := tidemarkSide(ctx, c, "tidemark, CSV → Parquet folder", c.bin.tidemark, "iceberg-parquet",
		jobFile{Name: "bench-parquet", Source: ds.Dir})
	ice := tidemarkSide(ctx, c, "tidemark, CSV → Iceberg table (append, own catalog in SQLite)", c.bin.tidemark,
		"iceberg-table", jobFile{Name: "bench-iceberg", Source: ds.Dir, Iceberg: "bench.orders"})
	sides := []*convertSide{ice, parquet}
	runRotated(ctx, c, "iceberg", sides)
	checkConvertSamples(&s, "CSV → Iceberg", sides, ds.Rows)

	med := func(side *convertSide) time.Duration {
		ts, _ := side.times()
		return median(ts)
	}
	row := summaryRow{Measure: measure, Target: target, Ratio: "—", Result: "not measured", Tidemark: "failed", Baseline: "failed"}
	if m := med(ice); m > 0 {
		row.Tidemark = rowsPerSec(ds.Rows, m)
	}
	if m := med(parquet); m > 0 {
		row.Baseline = rowsPerSec(ds.Rows, m) + " (" + parquet.label + ")"
		if t := med(ice); t > 0 {
			r := m.Seconds() / t.Seconds()
			row.Ratio = ratio(r)
			row.Result = "met"
			if r < 0.9 {
				row.Result = "missed"
			}
		}
	}
	s.Summary = []summaryRow{row}

	b.p(fmt.Sprintf("Input: the files of scenario 1 (%d files of %s rows, %s rows, %s) in `%s`.", len(ds.Files),
		thousands(c.ConvertRows), thousands(ds.Rows), mb(ds.Bytes), c.rel(ds.Dir)))
	b.p("Both sides are `tidemark run job.yaml --json` with a fresh state (SQLite) and an empty sink folder each " +
		"repetition; they differ only in the sink. The Iceberg job:")
	b.code("yaml", jobFile{Name: "bench-iceberg", Source: ds.Dir, Sink: filepath.Join(c.work, "iceberg-table-N", "out"),
		Iceberg: "bench.orders"}.yaml())
	b.p(fmt.Sprintf("Median of %d repetitions, rotating which side runs first. The output is counted back from the "+
		"Parquet files under each sink folder (for Iceberg, the table's data files).", c.Reps))
	var rows [][]string
	for _, side := range sides {
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
	if i, p := med(ice), med(parquet); i > 0 && p > 0 {
		b.p(fmt.Sprintf("Iceberg's cost over the Parquet folder: %s per run (%s of the Parquet run's time).",
			secs(i-p), ratio(i.Seconds()/p.Seconds())))
	}
	return s
}
