package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInputFormats: CSV, JSON Lines and Parquet inputs, plain and with .gz
// and .zst compression detected from the file name, mixed in one folder.
func TestInputFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format string
		exts   []string
	}{
		{"csv", []string{".csv", ".csv.gz", ".csv.zst"}},
		{"json", []string{".json", ".json.gz", ".json.zst", ".jsonl"}},
		{"parquet", []string{".parquet"}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{format: tc.format})
			var want []record
			for round := 0; round < 2; round++ {
				var added []record
				for _, ext := range tc.exts {
					recs := f.gen.records(25)
					path := filepath.Join(f.landing, "round"+itoaRound(round)+"-orders"+ext)
					switch tc.format {
					case "csv":
						writeCSV(t, path, recs)
					case "json":
						writeJSONL(t, path, recs)
					case "parquet":
						writeParquet(t, path, recs)
					}
					added = append(added, recs...)
				}
				s := f.mustRun()
				assertFiles(t, "run", s, int64(len(tc.exts)))
				assertRecords(t, "the run's output", f.sinkRun(s.RunID), added)
				want = append(want, added...)
			}
			f.assertSink(want)
		})
	}
}

// TestSinkFormats: parquet, CSV and JSON Lines sinks, partitioned and not,
// read back by DuckDB.
func TestSinkFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		format, partitionBy string
	}{
		{"csv", "-"},
		{"json", "-"},
		{"csv", "[product]"},
		{"parquet", "-"},
	} {
		t.Run(tc.format+strings.Trim(tc.partitionBy, "[]-"), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{sinkFormat: tc.format, partitionBy: tc.partitionBy})
			a := f.addCSVs("a", 2, 20)
			f.mustRun()
			b := f.addCSVs("b", 1, 20)
			f.mustRun()
			f.assertSink(concat(a, b))
			for _, file := range sinkFiles(t, f.output) {
				ext := map[string]string{"csv": ".csv", "json": ".json", "parquet": ".parquet"}[tc.format]
				if !strings.Contains(filepath.Base(file), ext) {
					t.Errorf("published file %s: want a %s file", file, ext)
				}
			}
		})
	}
}

func itoaRound(i int) string { return string(rune('0' + i)) }
