package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsStoryBlocks returns the crawler file and the job file of the docs'
// "From crawl to catalog-updating sink" (docs/how-to/catalog.md), as
// printed there.
func docsStoryBlocks(t *testing.T) (crawler, job string) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "how-to", "catalog.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	heading := regexp.MustCompile("(?m)^#+ From crawl to catalog-updating sink$").FindStringIndex(text)
	if heading == nil {
		t.Fatal(`docs/how-to/catalog.md has no heading "From crawl to catalog-updating sink"`)
	}
	section := text[heading[1]:]
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end+1]
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) != 2 {
		t.Fatalf("the docs' story has %d yaml blocks, want the crawler's and the job's", len(blocks))
	}
	return blocks[0][1], blocks[1][1]
}

// TestStoryDocs runs the docs' story as printed: its crawler and job
// files over a sales/ folder that grows by a day, `tidemark run` each day
// (the job crawls first), the rewind with --purge-output, and the DuckDB
// DDL.
func TestStoryDocs(t *testing.T) {
	t.Parallel()
	crawler, job := docsStoryBlocks(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "crawler.yaml"), []byte(crawler))
	writeFile(t, filepath.Join(dir, "job.yaml"), []byte(job))
	w := &storyWorld{t: t, be: local, dir: dir, sales: &localPlace{dir: filepath.Join(dir, "sales")},
		out: &localPlace{dir: filepath.Join(dir, "clean")}, state: filepath.Join(dir, ".tidemark", "state.db"),
		mode: "add_new_columns", job: filepath.Join(dir, "job.yaml"), crawler: filepath.Join(dir, "crawler.yaml")}
	days := []struct{ d, file string }{
		{"2026-12-07", storyHeader + "1,c1,widget,10\n2,c2,gadget,20\n"},
		{"2026-12-08", storyHeader + "3,c1,gizmo,30\n"},
		{"2026-12-09", storyHeader + "4,c3,gadget,40\n"},
		{"2026-12-10", "order_id,customer_id,product,amount,coupon\n5,c1,doohickey,50,SAVE10\n"},
	}
	var runs []runSummary
	for _, d := range days {
		w.day(d.d, map[string]string{"orders-1.csv": d.file})
		s, r := w.run(0)
		assertMentions(t, r, "table sales_db.orders_raw:")
		if s.source().Files != 1 {
			t.Errorf("run of %s read %d files, want 1", d.d, s.source().Files)
		}
		runs = append(runs, s)
	}
	equalStrings(t, "sink", w.rows("order_id", "product", "coupon"),
		[]string{"1|widget|NULL", "2|gadget|NULL", "3|gizmo|NULL", "4|gadget|NULL", "5|doohickey|SAVE10"})
	w.assertPartitions("after Thursday", "doohickey", "gadget", "gizmo", "widget")
	w.tidemark(0, "bookmark", "reset", w.job, "--to-run", runs[2].RunID, "--purge-output")
	w.assertPartitions("after the rewind", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 4 || d != 4 {
		t.Errorf("DuckDB DDL after the rewind: %d rows, %d distinct; want 4 once", n, d)
	}
	w.run(0)
	if n, d := w.ddlCount(); n != 5 || d != 5 {
		t.Errorf("DuckDB DDL after the rerun: %d rows, %d distinct; want 5 once", n, d)
	}
}
