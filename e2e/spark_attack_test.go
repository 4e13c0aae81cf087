package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

// TestSparkSessionTimeZoneIsUTC: a job whose Spark conf moved the
// session's time zone (spark.sql.session.timeZone: America/New_York) ran
// with exit 0 and wrote the instant 2026-01-02 08:00:00+00 of a CSV
// source as 2026-01-02 03:00:00+00 (formatted in New York time, labelled
// UTC): every time was changed. Such a conf is refused naming the key
// (exit 2, nothing written); UTC spelled out runs and writes the value.
func TestSparkSessionTimeZoneIsUTC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		zone string
		code int
	}{
		{"America/New_York", 2},
		{"+02:00", 2},
		{"UTC", 0},
	} {
		t.Run(tc.zone, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			writeFile(t, filepath.Join(in, "a.csv"), []byte("id,tz\n1,2026-01-02 10:00:00+02\n"))
			jobPath := filepath.Join(dir, "job.yaml")
			writeFile(t, jobPath, []byte(fmt.Sprintf(`job: zone
engine: {spark: {remote: %q, conf: {spark.sql.session.timeZone: %q}}}
sources:
  - ctx: src
    path: %q
    format: csv
    options: {header: true}
sinks:
  - ctx: out
    path: %q
    format: csv
`, sparktest.Remote(t), tc.zone, in, out)))
			r := tidemark(t, dir, nil, "run", jobPath)
			if r.code != tc.code {
				t.Fatalf("run: got exit %d, want %d\n%v", r.code, tc.code, r)
			}
			if tc.code != 0 {
				assertMentions(t, r, "spark.sql.session.timeZone", "UTC")
				if _, err := os.Stat(out); err == nil {
					t.Errorf("a refused job wrote %s", out)
				}
				return
			}
			var got strings.Builder
			for _, f := range sinkFiles(t, out) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(data)
			}
			if want := "id,tz\n1,2026-01-02 08:00:00+00\n"; got.String() != want {
				t.Errorf("sink: got %q, want %q", got.String(), want)
			}
		})
	}
}

// TestSparkHeaderColumnWithoutName: a CSV header with a column without a
// name (id,,n) failed on Spark saying "the header has a column the schema
// lacks" without naming one. The error now says which column of the
// header has no name; the DuckDB engine reads it as column1.
func TestSparkHeaderColumnWithoutName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	writeFile(t, filepath.Join(in, "a.csv"), []byte("id,,n\n1,2,3\n"))
	jobPath := filepath.Join(dir, "job.yaml")
	writeFile(t, jobPath, []byte(fmt.Sprintf(`job: noname
%s
sources:
  - ctx: src
    path: %q
    format: csv
    options: {header: true}
sinks:
  - ctx: out
    path: %q
`, sparkEngine(t), in, out)))
	r := tidemark(t, dir, nil, "run", jobPath)
	if r.code != 1 {
		t.Fatalf("run: got exit %d, want 1\n%v", r.code, r)
	}
	assertMentions(t, r, "a.csv line 1", "column 2 of the header has no name")
	if files := sinkFiles(t, out); len(files) != 0 {
		t.Errorf("a failed run published %v", files)
	}
}
