package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// TestGlueExample: issue #24 item 4. examples/glue/run.sh, the one
// command, runs the article's script (etl.py, which TestGlueArticleScript
// runs too) over the sales arrivals' three days on a copy of the
// examples: the crawler file it names registers sales_db.orders_raw, and
// the runs read Monday's 10 files, Tuesday's 5, then nothing. The output
// it publishes to s3://your-output-bucket/sales/ (its local S3), read back
// with DuckDB, holds every order exactly once. The test's pyspark stands
// for the venv the script would make.
func TestGlueExample(t *testing.T) {
	python := gluePython(t)
	gw := s3test.RequireBinary(t)
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, dir := range []string{"examples/glue", "examples/sales/arrivals"} {
		if err := os.CopyFS(filepath.Join(tmp, dir), os.DirFS(filepath.Join(root, dir))); err != nil {
			t.Fatal(err)
		}
	}
	here := filepath.Join(tmp, "examples", "glue")
	for _, junk := range []string{".venv", ".s3", ".tidemark", "landing", "bin"} {
		_ = os.RemoveAll(filepath.Join(here, junk)) // what a run of it in the repository left
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*glueTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(here, "run.sh"))
	cmd.Dir = tmp
	cmd.Env = baseEnv("TIDEMARK_BIN="+tidemarkBin, "TIDEMARK_PYTHON="+python,
		"PATH="+filepath.Dir(gw)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash examples/glue/run.sh: %v\n%s", err, out)
	}
	if strings.Contains(string(out), ".venv") {
		t.Errorf("run.sh made a venv although TIDEMARK_PYTHON has pyspark:\n%s", out)
	}

	var runs []map[string]any
	r := tidemark(t, here, nil, "runs", "sales-etl", "--state", filepath.Join(here, ".tidemark", "state.db"), "--json")
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil || len(runs) != 3 {
		t.Fatalf("runs: got %d runs (%v), want 3\n%v\n%s", len(runs), err, r, out)
	}
	monday, tuesday := csvRows(t, filepath.Join(here, "..", "sales", "arrivals", "monday")), csvRows(t, filepath.Join(here, "..", "sales", "arrivals", "tuesday"))
	for i, want := range []struct{ files, rows float64 }{{0, 0}, {5, float64(tuesday)}, {10, float64(monday)}} { // newest first
		src := runs[i]["sources"].(map[string]any)["orders_source"].(map[string]any)
		if src["files"] != want.files || src["rows"] != want.rows || runs[i]["status"] != "succeeded" {
			t.Errorf("day %d read %v (status %v), want %v files and %v rows", 3-i, src, runs[i]["status"], want.files, want.rows)
		}
	}
	for _, want := range []string{"source orders_source: 10 files", "source orders_source: 5 files", "sales_db.orders_raw"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("run.sh's output lacks %q:\n%s", want, out)
		}
	}

	published := filepath.Join(here, ".s3", "your-output-bucket", "sales")
	var n, distinct int
	q := fmt.Sprintf("SELECT count(*), count(DISTINCT order_id) FROM read_parquet('%s/*.parquet')", published)
	if err := duck.QueryRow(q).Scan(&n, &distinct); err != nil {
		t.Fatalf("reading the output back: %v", err)
	}
	if n != monday+tuesday || distinct != n {
		t.Errorf("the output holds %d orders (%d distinct), want %d, each once", n, distinct, monday+tuesday)
	}
}

// csvRows counts the records of the CSV files (each with a header) in dir.
func csvRows(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(strings.TrimSpace(string(b)), "\n")
	}
	if n == 0 {
		t.Fatalf("%s holds no records", dir)
	}
	return n
}
