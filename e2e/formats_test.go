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
	eachBackend(t, testInputFormats)
}

func testInputFormats(t *testing.T, be backend) {
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
			f := newFixtureOn(t, be, jobOpts{format: tc.format})
			var want []record
			for round := 0; round < 2; round++ {
				var added []record
				for _, ext := range tc.exts {
					recs := f.gen.records(25)
					name := "round" + itoaRound(round) + "-orders" + ext
					switch tc.format {
					case "csv":
						f.put(name, compressFor(t, name, csvBytes(recs)))
					case "json":
						f.put(name, compressFor(t, name, jsonlBytes(recs)))
					case "parquet":
						f.put(name, parquetBytes(t, recs))
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
	eachBackend(t, testSinkFormats)
}

func testSinkFormats(t *testing.T, be backend) {
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
			f := newFixtureOn(t, be, jobOpts{sinkFormat: tc.format, partitionBy: tc.partitionBy})
			a := f.addCSVs("a", 2, 20)
			f.mustRun()
			b := f.addCSVs("b", 1, 20)
			f.mustRun()
			f.assertSink(concat(a, b))
			for _, file := range f.sinkFiles() {
				ext := map[string]string{"csv": ".csv", "json": ".json", "parquet": ".parquet"}[tc.format]
				if !strings.Contains(filepath.Base(file), ext) {
					t.Errorf("published file %s: want a %s file", file, ext)
				}
			}
		})
	}
}

func itoaRound(i int) string { return string(rune('0' + i)) }
