package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crawlReport is crawl --json.
type crawlReport struct {
	Crawler  string `json:"crawler"`
	Database string `json:"database"`
	Status   string `json:"status"`
	Tables   map[string]struct {
		Status  string `json:"status"`
		Version int64  `json:"version"`
		Columns []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"columns"`
		Partitions      int      `json:"partitions"`
		PartitionsAdded int      `json:"partitions_added"`
		Location        string   `json:"location"`
		Changes         []string `json:"changes"`
	} `json:"tables"`
	FilesOpened int64 `json:"files_opened"`
	Skipped     []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"skipped"`
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

func crawlJSON(t *testing.T, r result) crawlReport {
	t.Helper()
	var rep crawlReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("crawl --json: %v\n%s", err, r)
	}
	return rep
}

func columnsOf(rep crawlReport, table string) string {
	var parts []string
	for _, c := range rep.Tables[table].Columns {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return strings.Join(parts, ", ")
}

// TestCrawl: the binary crawls a prefix that grows by a day's folder on
// local disks and on S3: the first crawl creates sales_db.sales with its
// day partitions, the next (new_folders_only) opens only the new folder's
// file and adds its partition, a new column makes version 2, and a job
// with crawler: crawls before it runs.
func TestCrawl(t *testing.T) {
	t.Parallel()
	eachBackend(t, testCrawl)
}

func testCrawl(t *testing.T, be backend) {
	dir := t.TempDir()
	data := newPlace(t, be, dir, "sales")
	var env []string
	if be == onS3 {
		env = sharedS3(t).env()
	}
	day := func(d int, header string, rows ...string) {
		data.put(t, fmt.Sprintf("day=2026-01-0%d/part-0.csv", d), []byte(header+"\n"+strings.Join(rows, "\n")+"\n"))
	}
	day(1, "order_id,customer_id,product,amount", "1,c1,apple,10", "2,c2,pear,20")
	day(2, "order_id,customer_id,product,amount", "3,c1,apple,5")
	data.put(t, "tmp/scratch.json", []byte(`{"x":1}`+"\n"))
	data.put(t, "day=2026-01-02/notes.bin", []byte("\x00\x01binary"))
	crawlerFile := filepath.Join(dir, "crawler.yaml")
	writeFile(t, crawlerFile, []byte(fmt.Sprintf(`crawler: sales-crawler
database: sales_db
targets:
  - path: %s
    exclude: ["tmp/**"]
recrawl: new_folders_only
sample_files: 3
`, data.loc())))
	r := tidemark(t, dir, env, "crawl", "crawler.yaml", "--json")
	if r.code != 0 {
		t.Fatalf("crawl: %s", r)
	}
	rep := crawlJSON(t, r)
	tb := rep.Tables["sales"]
	if rep.Status != "succeeded" || tb.Status != "created" || tb.Version != 1 || tb.Partitions != 2 {
		t.Fatalf("first crawl: got %+v", rep)
	}
	if got, want := columnsOf(rep, "sales"), "order_id BIGINT, customer_id VARCHAR, product VARCHAR, amount BIGINT"; got != want {
		t.Errorf("columns: got %s, want %s", got, want)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0].Path, "notes.bin") || !strings.Contains(rep.Skipped[0].Reason, "binary") {
		t.Errorf("skipped: got %+v, want notes.bin as binary", rep.Skipped)
	}
	assertMentions(t, r, "table sales_db.sales: created", "skipped")

	// A day's folder arrives: only its file is opened.
	day(3, "order_id,customer_id,product,amount", "4,c3,plum,7")
	rep = crawlJSON(t, tidemark(t, dir, env, "crawl", "crawler.yaml", "--json"))
	tb = rep.Tables["sales"]
	if rep.FilesOpened != 1 || tb.Status != "unchanged" || tb.PartitionsAdded != 1 || tb.Partitions != 3 {
		t.Errorf("new folder: got opened %d, %+v; want 1 file opened, 1 partition added", rep.FilesOpened, tb)
	}

	// A new column and a widened one: version 2, nothing narrowed.
	day(4, "order_id,customer_id,product,amount,coupon", "5,c1,apple,1.5,X1")
	rep = crawlJSON(t, tidemark(t, dir, env, "crawl", "crawler.yaml", "--json"))
	tb = rep.Tables["sales"]
	if tb.Status != "updated" || tb.Version != 2 {
		t.Errorf("new column: got %+v, want updated to version 2", tb)
	}
	if got, want := columnsOf(rep, "sales"), "order_id BIGINT, customer_id VARCHAR, product VARCHAR, amount DOUBLE, coupon VARCHAR"; got != want {
		t.Errorf("columns: got %s, want %s", got, want)
	}

	// The crawler's runs are kept like a job's.
	if r := tidemark(t, dir, env, "runs", "crawler:sales-crawler", "--state", filepath.Join(dir, ".tidemark", "state.db"), "--json"); r.code != 0 || strings.Count(r.stdout, `"succeeded"`) != 3 {
		t.Errorf("runs of the crawler: %s", r)
	}

	// A job that declares the crawler crawls before it plans.
	out := newPlace(t, be, dir, "out")
	day(5, "order_id,customer_id,product,amount,coupon", "6,c2,pear,2,")
	writeFile(t, filepath.Join(dir, "job.yaml"), []byte(fmt.Sprintf(`job: sales-daily
crawler: crawler.yaml
sources:
  - ctx: orders_source
    path: %s
    include: ["day=2026-01-05/*.csv"]
sinks:
  - ctx: orders_sink
    path: %s
    format: parquet
`, data.loc(), out.loc())))
	r = tidemark(t, dir, env, "run", "job.yaml", "--json")
	if r.code != 0 {
		t.Fatalf("run with crawler: %s", r)
	}
	assertMentions(t, r, "crawl ", "table sales_db.sales: unchanged", "1 added")
}

// TestCrawlErrors: a bad crawler file is exit 2 naming the line and key; a
// crawl past max_tables is exit 1, registers nothing and says why.
func TestCrawlErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.yaml"), []byte("crawler: c\ndatabase: d\ntargets:\n  - path: x\n    exlude: [a]\nrecrawl: sometimes\n"))
	r := tidemark(t, dir, nil, "crawl", "bad.yaml", "--json")
	if r.code != 2 {
		t.Fatalf("bad crawler file: %s", r)
	}
	assertMentions(t, r, `bad.yaml:5: targets[0].exlude: unknown key "exlude"`, `bad.yaml:6: recrawl: "sometimes" is not one of`)
	if rep := crawlJSON(t, r); rep.Status != "failed" || rep.ExitCode != 2 {
		t.Errorf("crawl --json: got %+v", rep)
	}

	for _, name := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(dir, "data", name, "x.csv"), []byte(fmt.Sprintf("id,%s\n1,2\n", name)))
	}
	writeFile(t, filepath.Join(dir, "many.yaml"), []byte("crawler: many\ndatabase: d\ntargets: [{path: data}]\ncombine_compatible_schemas: false\nmax_tables: 2\n"))
	r = tidemark(t, dir, nil, "crawl", "many.yaml", "--json")
	if r.code != 1 {
		t.Fatalf("past max_tables: %s", r)
	}
	rep := crawlJSON(t, r)
	if rep.Status != "failed" || !strings.Contains(rep.Error, "would make 3 tables, more than max_tables 2 (a, b, c)") || len(rep.Tables) != 0 {
		t.Errorf("past max_tables: got %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "a", "x.csv")); err != nil {
		t.Fatal(err)
	}
}
