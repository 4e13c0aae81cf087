package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
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

// TestMergeKeepsTheLastRowRead: one run reads two files that hold a
// version of the same key, the older file small, the newer large, into a
// PostgreSQL merge sink (the last row of a key wins). DuckDB keeps the
// newer file's version; Spark packs the files largest first, so the
// older file's version came last and won, with exit 0. Both engines now
// keep the newer one.
func TestMergeKeepsTheLastRowRead(t *testing.T) {
	t.Parallel()
	for _, eng := range []string{"duckdb", "spark"} {
		t.Run(eng, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			writeFile(t, filepath.Join(in, "a.csv"), []byte("id,v\n5,old\n"))
			var big strings.Builder
			big.WriteString("id,v\n")
			for i := 100; i < 3000; i++ {
				fmt.Fprintf(&big, "%d,filler\n", i)
			}
			big.WriteString("5,new\n")
			writeFile(t, filepath.Join(in, "b.csv"), []byte(big.String()))
			old := time.Now().Add(-time.Hour)
			if err := os.Chtimes(filepath.Join(in, "a.csv"), old, old); err != nil {
				t.Fatal(err)
			}
			table := sqltest.New(t, sqldb.Postgres)
			engineLine := "engine: duckdb"
			if eng == "spark" {
				engineLine = sparkEngine(t)
			}
			jobPath := filepath.Join(dir, "job.yaml")
			writeFile(t, jobPath, []byte(fmt.Sprintf(`job: lastwins
%s
sources:
  - ctx: src
    path: %q
    format: csv
    options: {header: true}
sinks:
  - ctx: pg
    connection: %s
    password_env: %s
    table: kv
    mode: merge
    merge_keys: [id]
`, engineLine, in, table.Connection, table.PasswordEnv)))
			r := tidemark(t, dir, []string{table.PasswordEnv + "=" + table.Password}, "run", jobPath)
			if r.code != 0 {
				t.Fatalf("run: got exit %d, want 0\n%v", r.code, r)
			}
			if got := table.Strings(t, "SELECT v FROM kv WHERE id = 5"); strings.Join(got, ",") != "new" {
				t.Errorf("key 5: got %q, want the newer file's version [new]", got)
			}
			if n := table.Count(t, "SELECT count(*) FROM kv"); n != 2901 {
				t.Errorf("rows: got %d, want 2901", n)
			}
		})
	}
}

// TestHeaderlessCSVColumnNames: a CSV source with header: false had its
// columns named _c0, _c1, ... on Spark and column00, column01, ... on
// DuckDB, so the same job wrote other column names (and a job that moved
// engines failed on its recorded schema). Spark now names them as DuckDB:
// column, then the position, zero-padded to the width of the last one.
func TestHeaderlessCSVColumnNames(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			var line []string
			for i := range n {
				line = append(line, fmt.Sprint(i))
			}
			keys := map[string]string{}
			for _, eng := range []string{"duckdb", sparkEngine(t)} {
				dir := t.TempDir()
				in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
				writeFile(t, filepath.Join(in, "a.csv"), []byte(strings.Join(line, ",")+"\n"))
				jobPath := filepath.Join(dir, "job.yaml")
				if eng != "duckdb" {
					eng = strings.TrimPrefix(eng, "engine: ")
				}
				writeFile(t, jobPath, []byte(fmt.Sprintf(`job: noheader
engine: %s
sources:
  - ctx: src
    path: %q
    format: csv
    options: {header: false}
sinks:
  - ctx: out
    path: %q
    format: json
`, eng, in, out)))
				if r := tidemark(t, dir, nil, "run", jobPath); r.code != 0 {
					t.Fatalf("run on %s: got exit %d, want 0\n%v", eng, r.code, r)
				}
				files := sinkFiles(t, out)
				if len(files) != 1 {
					t.Fatalf("sink on %s: got files %v, want one", eng, files)
				}
				data, err := os.ReadFile(files[0])
				if err != nil {
					t.Fatal(err)
				}
				var row map[string]any
				if err := json.Unmarshal(data, &row); err != nil {
					t.Fatalf("sink on %s: %q: %v", eng, data, err)
				}
				var names []string
				for k := range row {
					names = append(names, k)
				}
				sort.Strings(names)
				keys[eng] = strings.Join(names, ",")
			}
			want := "column0,column1,column2"
			if n == 12 {
				want = "column00,column01,column02,column03,column04,column05,column06,column07,column08,column09,column10,column11"
			}
			for eng, got := range keys {
				if got != want {
					t.Errorf("column names on %s: got %s, want %s", eng, got, want)
				}
			}
		})
	}
}

// TestSparkEmptyFieldUnderNullstr: under nullstr: N/A an empty unquoted
// field is the empty text on the DuckDB engine (a bad record in a BIGINT
// column); Spark read it as NULL with exit 0. The run now fails naming
// the file and line; a quoted empty text, and a delimiter inside quotes,
// are read as before.
func TestSparkEmptyFieldUnderNullstr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, content string
		code          int
	}{
		{"empty field", "id;s;n\n1;a;5\n3;;7\n", 1},
		{"empty last field", "id;s;n\n1;a;5\n3;x;\n", 1},
		{"quoted", "id;s;n\n1;a;5\n2;N/A;N/A\n4;||;7\n5;|a;;b|;8\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
			writeFile(t, filepath.Join(in, "b.csv"), []byte(tc.content))
			jobPath := filepath.Join(dir, "job.yaml")
			writeFile(t, jobPath, []byte(fmt.Sprintf(`job: nullstr
%s
sources:
  - ctx: src
    path: %q
    format: csv
    options: {header: true, delim: ";", quote: "|", nullstr: "N/A"}
sinks:
  - ctx: out
    path: %q
    format: json
`, sparkEngine(t), in, out)))
			r := tidemark(t, dir, nil, "run", jobPath)
			if r.code != tc.code {
				t.Fatalf("run: got exit %d, want %d\n%v", r.code, tc.code, r)
			}
			if tc.code != 0 {
				assertMentions(t, r, "b.csv line 3", "empty field")
				return
			}
			var got []string
			for _, f := range sinkFiles(t, out) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.Split(strings.TrimSpace(string(data)), "\n")...)
			}
			sort.Strings(got)
			want := []string{`{"id":1,"s":"a","n":5}`, `{"id":2,"s":null,"n":null}`, `{"id":4,"s":"","n":7}`, `{"id":5,"s":"a;;b","n":8}`}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("sink: got %q, want %q", got, want)
			}
		})
	}
}

// TestSparkANSIOff: a job conf with spark.sql.ansi.enabled: false ran a
// transform's CAST(500 AS TINYINT) as -12 (the overflow wrapped) with
// exit 0, where the DuckDB engine and Spark's default fail. Such a conf
// is refused naming the key (exit 2, nothing written).
func TestSparkANSIOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	writeFile(t, filepath.Join(in, "a.csv"), []byte("id,n\n1,500\n"))
	jobPath := filepath.Join(dir, "job.yaml")
	writeFile(t, jobPath, []byte(fmt.Sprintf(`job: ansi
engine: {spark: {remote: %q, conf: {spark.sql.ansi.enabled: "false"}}}
sources:
  - ctx: src
    path: %q
    format: csv
    options: {header: true}
transforms:
  x: SELECT id, CAST(n AS TINYINT) AS small FROM src
sinks:
  - ctx: out
    path: %q
    format: csv
`, sparktest.Remote(t), in, out)))
	r := tidemark(t, dir, nil, "run", jobPath)
	if r.code != 2 {
		t.Fatalf("run: got exit %d, want 2\n%v", r.code, r)
	}
	assertMentions(t, r, "spark.sql.ansi.enabled")
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused job wrote %s", out)
	}
}
