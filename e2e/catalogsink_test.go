package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogSinkInsideTable: a job whose sink lies inside the location
// of the catalog table its source reads, or inside one of the table's
// partitions, or holds the table, is refused before anything runs (exit
// 2 naming the sink's key and the table's folder), as a sink inside a path
// source is. Before, it ran: the crawler registered the sink's folder as a
// partition and every run read its own output back.
func TestCatalogSinkInsideTable(t *testing.T) {
	t.Parallel()
	for _, be := range []backend{local, onS3} {
		t.Run(string(be), func(t *testing.T) { catalogSinkInsideTable(t, be) })
	}
}

func catalogSinkInsideTable(t *testing.T, be backend) {
	w := newStoryWorld(t, be, stateStores[0], "fail")
	w.day("2026-12-07", map[string]string{"orders-1.csv": storyHeader + "1,c1,widget,10\n"})
	w.crawl()
	job, err := os.ReadFile(w.job)
	if err != nil {
		t.Fatal(err)
	}
	table := strings.TrimSuffix(w.sales.loc(), "/")
	parent := table[:strings.LastIndex(table, "/")]
	for _, tc := range []struct {
		name, sink string
		says       []string
	}{
		{"inside a partition", table + "/day=2026-12-07/out",
			[]string{"partition day=2026-12-07 of table sales_db.orders_raw", "lies inside"}},
		{"inside the table", table + "/out", []string{"the location of table sales_db.orders_raw", "lies inside"}},
		{"holding the table", parent, []string{"the location of table sales_db.orders_raw", "holds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, w.job, []byte(strings.Replace(string(job), w.out.loc(), tc.sink, 1)))
			_, r := w.run(2)
			assertMentions(t, r, append(tc.says, "sinks[0].path", "orders_source", tc.sink)...)
			assertMentions(t, w.tidemark(2, "plan", w.job), append(tc.says, "sinks[0].path")...)
			if runs := tidemark(t, w.dir, w.env, "runs", w.job, "--json"); runs.code == 0 && strings.Contains(runs.stdout, `"run_id"`) || runs.code == 1 {
				t.Errorf("a refused run was recorded:\n%v", runs)
			}
			if _, err := os.Stat(filepath.Join(tc.sink, "_tidemark")); be == local && err == nil {
				t.Errorf("the refused sink was claimed: %s/_tidemark exists", tc.sink)
			}
		})
	}
	writeFile(t, w.job, job)
	if s, _ := w.run(0); s.source().Files != 1 {
		t.Errorf("the job as it was: read %d files, want 1", s.source().Files)
	}
}

// TestCrawlNeverRegistersSink: a sink folder (another job's: it holds
// _tidemark/) inside the crawled table is never registered as a partition,
// on a local disk and on S3, crawl after crawl, so the job reading the
// table reads each input row once and never the sink's output.
func TestCrawlNeverRegistersSink(t *testing.T) {
	t.Parallel()
	for _, be := range []backend{local, onS3} {
		t.Run(string(be), func(t *testing.T) {
			w := newStoryWorld(t, be, stateStores[0], "fail")
			w.sales.put(t, "day=2026-12-09/part-r0-0.csv", []byte(storyHeader+"7,c7,widget,70\n8,c8,widget,80\n"))
			w.sales.put(t, "day=2026-12-09/_tidemark/owner.json", []byte("{}"))
			var rows int64
			for i, d := range []string{"2026-12-06", "2026-12-07", "2026-12-08"} {
				w.day(d, map[string]string{"orders-1.csv": storyHeader + fmt.Sprintf("%d,c1,widget,10\n", i+1)})
				w.crawl()
				for _, p := range w.show("sales_db.orders_raw").Partitions {
					if p.Values["day"] == "2026-12-09" {
						t.Fatalf("crawl %d registered the sink's folder as partition %v (%s)", i+1, p.Values, p.Location)
					}
				}
				s, _ := w.run(0)
				rows += s.source().Rows
			}
			if rows != 3 {
				t.Errorf("rows read over three runs: got %d, want 3 (one per day, none of the sink's)", rows)
			}
		})
	}
}
