package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanChecksSQL: plan runs the job's transforms and partition columns
// against a sample of the input it plans, so that an unknown column or a
// SQL error is found before a run: exit 2 naming the column or the SQL
// error and the job-file line, and no run recorded.
func TestPlanChecksSQL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "landing", "day1.csv"), []byte("order_id,product,amount\n1,a,10\n2,b,20\n"))
	good := `job: checked
sources:
  - ctx: orders
    path: landing/
    format: csv
transforms:
  clean: |
    SELECT order_id, product, amount FROM orders
sinks:
  - ctx: out
    path: out/
    partition_by: [product]
`
	jobFile := filepath.Join(dir, "job.yaml")
	writeFile(t, jobFile, []byte(good))
	if r := tidemark(t, dir, nil, "plan", "job.yaml"); r.code != 0 {
		t.Fatalf("plan of a good job: exit %d\n%v", r.code, r)
	}
	if r := tidemark(t, dir, nil, "run", "job.yaml"); r.code != 0 {
		t.Fatalf("run: exit %d\n%v", r.code, r)
	}
	writeFile(t, filepath.Join(dir, "landing", "day2.csv"), []byte("order_id,product,amount\n3,c,30\n"))
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"unknown partition column", "partition_by: [product]", "partition_by: [prodcut]",
			[]string{"job.yaml:12: sinks[0].partition_by", "prodcut", "product"}},
		{"unknown column in a transform", "SELECT order_id, product, amount", "SELECT order_id, prodcut, amount",
			[]string{"job.yaml:7: transforms.clean", "prodcut"}},
		{"SQL syntax error", "SELECT order_id, product, amount FROM orders", "SELECT order_id, product, amount FORM orders",
			[]string{"transforms.clean"}},
	} {
		writeFile(t, jobFile, []byte(strings.Replace(good, tc.old, tc.new, 1)))
		r := tidemark(t, dir, nil, "plan", "job.yaml")
		if r.code != 2 {
			t.Errorf("%s: plan exit %d, want 2\n%v", tc.name, r.code, r)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: plan does not say %q\n%v", tc.name, w, r)
			}
		}
	}
	runs := decodeOne[[]runSummary](t, tidemark(t, dir, nil, "runs", "checked", "--state", filepath.Join(dir, ".tidemark", "state.db"), "--json"))
	if len(runs) != 1 {
		t.Errorf("plan recorded runs: got %d runs, want the first run only", len(runs))
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "product=c")); !os.IsNotExist(err) {
		t.Errorf("plan wrote output (%v)", err)
	}
}
