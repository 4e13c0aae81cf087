package tidemark_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
)

// TestRunCrawlsAndSendsLineage: a Go program's Run of a job with a
// crawler: and a lineage: block crawls before the run and sends the run's
// OpenLineage events, as `tidemark run` does (only the CLI did both: a Go
// caller silently skipped them).
func TestRunCrawlsAndSendsLineage(t *testing.T) {
	var mu sync.Mutex
	var events []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		events = append(events, fmt.Sprint(ev["eventType"]))
		mu.Unlock()
	}))
	defer srv.Close()

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sales/day=1/part-0.csv", "order_id,amount\n1,10\n2,20\n")
	write("crawler.yaml", fmt.Sprintf("crawler: sales-crawler\ndatabase: sales_db\ntargets:\n  - path: %s\n", filepath.Join(dir, "sales")))
	write("job.yaml", fmt.Sprintf(`job: sales-daily
crawler: crawler.yaml
lineage: {url: %s}
sources:
  - ctx: orders
    catalog: sales_db.sales
sinks:
  - ctx: out
    path: %s
    format: csv
`, srv.URL, filepath.Join(dir, "out")))
	spec, err := job.Load(filepath.Join(dir, "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := tidemark.Run(context.Background(), spec, tidemark.RunOptions{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := res.Sources["orders"].Rows; got != 2 {
		t.Errorf("rows read from the crawled table: got %d, want 2", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || events[0] != "START" || events[1] != "COMPLETE" {
		t.Errorf("lineage events: got %v, want [START COMPLETE]", events)
	}
}
