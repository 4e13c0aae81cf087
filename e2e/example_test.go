package e2e

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestExampleSales runs examples/sales/job.yaml as the quickstart does, on a
// copy, from another working folder: its relative paths resolve against the
// job file's folder. Monday 10 files, Tuesday 5, Wednesday nothing.
func TestExampleSales(t *testing.T) {
	t.Parallel()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "examples", "sales")
	dir := t.TempDir()
	job := filepath.Join(dir, "job.yaml")
	copyFile(t, filepath.Join(example, "job.yaml"), job)
	landing := filepath.Join(dir, "landing")
	output := filepath.Join(dir, "output")
	elsewhere := t.TempDir()

	run := func(day string) runSummary {
		t.Helper()
		r := tidemark(t, elsewhere, nil, "run", job, "--json")
		if r.code != 0 {
			t.Fatalf("%s: got exit %d, want 0\n%v", day, r.code, r)
		}
		return decodeOne[runSummary](t, r)
	}
	arrive := func(day string) []record {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(example, "arrivals", day, "*.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var recs []record
		for _, src := range files {
			copyFile(t, src, filepath.Join(landing, filepath.Base(src)))
			recs = append(recs, readSalesCSV(t, src)...)
		}
		return recs
	}

	monday := arrive("monday")
	if len(monday) == 0 {
		t.Fatal("examples/sales/arrivals/monday holds no records")
	}
	s := run("Monday")
	if s.Job != "sales-daily" {
		t.Errorf("job = %q, want sales-daily", s.Job)
	}
	assertFiles(t, "Monday", s, 10)
	assertSink(t, output, parquetByProduct, monday)

	tuesday := arrive("tuesday")
	assertFiles(t, "Tuesday", run("Tuesday"), 5)
	assertSink(t, output, parquetByProduct, concat(monday, tuesday))

	assertFiles(t, "Wednesday", run("Wednesday"), 0)
	assertSink(t, output, parquetByProduct, concat(monday, tuesday))
	assertNoDuplicates(t, output, parquetByProduct)

	if _, err := os.Stat(filepath.Join(dir, ".tidemark", "state.db")); err != nil {
		t.Errorf("default state next to the job file: %v", err)
	}
	// The quickstart's bare job name finds the state from the job's folder.
	r := tidemark(t, dir, nil, "runs", "sales-daily", "--json")
	if r.code != 0 {
		t.Fatalf("runs sales-daily: got exit %d, want 0\n%v", r.code, r)
	}
	if runs := decodeOne[[]runSummary](t, r); len(runs) != 3 {
		t.Errorf("runs sales-daily: got %d runs, want 3", len(runs))
	}
}

// readSalesCSV parses a sales CSV with its header.
func readSalesCSV(t testing.TB, path string) []record {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []record
	for _, row := range rows[1:] {
		id, err1 := strconv.ParseInt(row[0], 10, 64)
		amount, err2 := strconv.ParseInt(row[3], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %v", path, row)
		}
		out = append(out, record{OrderID: id, CustomerID: row[1], Product: row[2], Amount: amount})
	}
	return out
}
