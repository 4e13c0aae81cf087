package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

// TestSparkUnclosedQuote: Spark reads CSV a line at a time, so a line
// that opens a quote it does not close was read as if the line closed
// it: an unterminated quote became a value and the run succeeded, and
// with skip or quarantine a quoted field spanning lines was cut (its
// first line kept as the row, the rest one "bad record"). Under every
// policy the run now fails naming the file and the line, publishes
// nothing and keeps the bookmark, as the DuckDB engine does for an
// unterminated quote.
func TestSparkUnclosedQuote(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"fail", "skip", "quarantine"} {
		for _, tc := range []struct{ name, line string }{
			{"unterminated", `9001,c1,pear,"5`},
			{"spanning lines", "9001,c1,\"pear\nand fig\",5"},
		} {
			t.Run(policy+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, jobOpts{top: []string{sparkEngine(t), "on_bad_record: " + policy}})
				first := f.addCSVs("good", 1, 5)
				f.mustRun()
				before := f.bookmark()
				filesBefore := relFiles(t, f.outDir())

				good := f.gen.records(3)
				var b strings.Builder
				b.WriteString("order_id,customer_id,product,amount\n")
				for i, r := range good {
					if i == 2 { // lines 2-3 good; line 4 opens the quote
						b.WriteString(tc.line + "\n")
					}
					fmt.Fprintf(&b, "%d,%s,%s,%d\n", r.OrderID, r.CustomerID, r.Product, r.Amount)
				}
				f.put("quote.csv", []byte(b.String()))
				_, r := f.runExpect(1)
				assertMentions(t, r, "quote.csv")
				if !strings.Contains(r.stderr, "line 4") || !strings.Contains(r.stderr, "quote") {
					t.Errorf("got stderr %q, want it to name line 4 and the quote", r.stderr)
				}
				if after := f.bookmark(); string(after.Version) != string(before.Version) {
					t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
				}
				if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
					t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
				}
				f.assertSink(first)
			})
		}
	}
}

// TestSparkPartitionFoldersAsDuckDB: a job that moves from DuckDB to
// Spark (one line of its job file) with overwrite_partitions. Spark named
// partition folders its own way (Hive's escaping: p=a b, p=é, p=a+b where
// DuckDB writes p=a%20b, p=%C3%A9, p=a%2Bb), so the Spark run replaced no
// partition DuckDB had written and the sink held both runs' rows for each
// value. The folders now have DuckDB's names and the partition is
// replaced.
func TestSparkPartitionFoldersAsDuckDB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	values := []string{"a b", "é", "a+b", "a,b", "2024-01-01 10:00:00", "a(b)!", "x=y/z"}
	var first, second strings.Builder
	first.WriteString("id,p\n")
	second.WriteString("id,p\n")
	for i, v := range values {
		fmt.Fprintf(&first, "%d,%q\n", i, v)
		fmt.Fprintf(&second, "%d,%q\n", 100+i, v)
	}
	writeFile(t, filepath.Join(in, "1.csv"), []byte(first.String()))
	jobPath := filepath.Join(dir, "job.yaml")
	job := func(engine string) {
		writeFile(t, jobPath, []byte(fmt.Sprintf(`job: move
engine: %s
sources:
  - ctx: src
    path: %q
sinks:
  - ctx: out
    path: %q
    partition_by: [p]
    mode: overwrite_partitions
`, engine, in, out)))
	}
	job("duckdb")
	if r := tidemark(t, dir, nil, "run", jobPath); r.code != 0 {
		t.Fatalf("run on duckdb: exit %d\n%v", r.code, r)
	}
	before := partitionFolders(t, out)
	writeFile(t, filepath.Join(in, "2.csv"), []byte(second.String()))
	job(fmt.Sprintf("{spark: {remote: %q}}", sparktest.Remote(t)))
	if r := tidemark(t, dir, nil, "run", jobPath); r.code != 0 {
		t.Fatalf("run on spark: exit %d\n%v", r.code, r)
	}
	if after := partitionFolders(t, out); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("partition folders:\nduckdb %q\nspark  %q", before, after)
	}
	files := sinkFiles(t, out)
	got := queryText(t, "SELECT p, id FROM "+readerSQL(files, sinkFormat{format: "parquet", hive: true})+" ORDER BY ALL")
	var want strings.Builder
	sorted := append([]string(nil), values...)
	sort.Strings(sorted)
	for _, v := range sorted {
		fmt.Fprintf(&want, "[%s %d]\n", v, 100+slices.Index(values, v))
	}
	if got != want.String() {
		t.Errorf("rows after overwrite_partitions on spark:\n%s\nwant:\n%s", got, want.String())
	}
}

// partitionFolders lists the key=value folders under dir, sorted.
func partitionFolders(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, f := range sinkFiles(t, dir) {
		rel, err := filepath.Rel(dir, filepath.Dir(f))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}
