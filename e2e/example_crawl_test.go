package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExampleCrawler crawls examples/sales/crawler.yaml on a copy: the
// arrivals folder becomes sales_db.arrivals, a partition per day.
func TestExampleCrawler(t *testing.T) {
	t.Parallel()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "examples", "sales")
	dir := t.TempDir()
	copyFile(t, filepath.Join(example, "crawler.yaml"), filepath.Join(dir, "crawler.yaml"))
	for _, day := range []string{"monday", "tuesday"} {
		files, err := filepath.Glob(filepath.Join(example, "arrivals", day, "*.csv"))
		if err != nil || len(files) == 0 {
			t.Fatalf("examples/sales/arrivals/%s: %v", day, err)
		}
		for _, f := range files {
			copyFile(t, f, filepath.Join(dir, "arrivals", day, filepath.Base(f)))
		}
	}
	r := tidemark(t, os.TempDir(), nil, "crawl", filepath.Join(dir, "crawler.yaml"), "--json")
	if r.code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	rep := crawlJSON(t, r)
	tb, ok := rep.Tables["arrivals"]
	if !ok || tb.Status != "created" || tb.Partitions != 2 {
		t.Fatalf("got %+v, want arrivals created with 2 partitions", rep)
	}
	if got, want := columnsOf(rep, "arrivals"), "order_id BIGINT, customer_id VARCHAR, product VARCHAR, amount BIGINT"; got != want {
		t.Errorf("columns: got %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tidemark", "state.db")); err != nil {
		t.Errorf("the state store beside the crawler file: %v", err)
	}
}
