package crawler

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
)

// TestCrawlSinkTable: a crawl over the folder of a table that a sink
// registered (options {header: true}, no delimiter: the reader's default;
// partition folders written with a trailing '/') takes its folders as the
// table's partitions: none skipped as another kind, none deprecated while
// its files are there, none registered again.
func TestCrawlSinkTable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"day=1/part-1.csv": dayRows(3, ""), "day=2/part-1.csv": dayRows(2, "")})
	st := newState(t)
	ctx := context.Background()
	tb := catalog.Table{Database: "sales_db", Name: "sales", Location: root, Format: "csv",
		Options:       map[string]string{"header": "true"},
		Columns:       []catalog.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "customer_id", Type: "VARCHAR"}, {Name: "amount", Type: "DOUBLE"}},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}},
		Parameters:    map[string]string{"tidemark_sink": "o"}}
	ch := catalog.Changes{Databases: []catalog.Database{{Name: "sales_db"}}, Tables: []catalog.TableChange{{Table: tb}}}
	for _, d := range []string{"1", "2"} {
		ch.Partitions = append(ch.Partitions, catalog.Partition{Database: "sales_db", Table: "sales", Values: []string{d},
			Location: filepath.Join(root, "day="+d) + "/"})
	}
	if err := st.ApplyCatalog(ctx, ch); err != nil {
		t.Fatal(err)
	}
	c := crawlerFile(t, dir, crawlerYAML(dir, ""))
	rep := mustCrawl(t, c, st)
	got := rep.Tables["sales"]
	if got == nil || got.Status != StatusUnchanged || got.Version != 1 || got.PartitionsAdded != 0 || got.PartitionsDeprecated != 0 {
		t.Errorf("the crawl's report of the sink's table: got %+v, want unchanged at version 1, no partition added or deprecated", got)
	}
	if len(rep.Skipped) > 0 {
		t.Errorf("skipped: got %+v, want none", rep.Skipped)
	}
	if p := partitions(t, st, "sales"); !slices.Equal(p, []string{"1", "2"}) {
		t.Errorf("partitions: got %v, want [1 2]", p)
	}
}

// TestCrawlSkipsSinkInsideTable: a sink folder (it holds _tidemark/)
// inside a crawled table's folder is not registered as a partition, so a
// job reading the table never reads the sink's output back; the crawl
// reports it skipped. A sink folder at table_level is a table of its own.
func TestCrawlSkipsSinkInsideTable(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"day=1/a.csv": dayRows(3, ""), "day=2/a.csv": dayRows(2, ""),
		"day=3/part-r1-0.csv": dayRows(5, ""), "day=3/_tidemark/owner.json": "{}",
		"out/day=9/part-r1-0.csv": dayRows(5, ""), "out/_tidemark/owner.json": "{}"})
	st := newState(t)
	rep := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "")), st)
	if p := partitions(t, st, "sales"); !slices.Equal(p, []string{"1", "2"}) {
		t.Errorf("partitions: got %v, want [1 2] (day=3 and out/ hold _tidemark/)", p)
	}
	var skipped []string
	for _, s := range rep.Skipped {
		if strings.Contains(s.Reason, "_tidemark/") {
			skipped = append(skipped, filepath.Base(strings.TrimSuffix(s.Path, "/")))
		}
	}
	if !slices.Equal(skipped, []string{"day=3", "out"}) {
		t.Errorf("skipped as sinks: got %v (report %+v), want [day=3 out]", skipped, rep.Skipped)
	}
	// Again: still not registered.
	mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "")), st)
	if p := partitions(t, st, "sales"); !slices.Equal(p, []string{"1", "2"}) {
		t.Errorf("partitions after a second crawl: got %v, want [1 2]", p)
	}

	// At table_level the sink's folder is a table: its own partitions.
	st2 := newState(t)
	mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "table_level: 1\n")), st2)
	if p := partitions(t, st2, "out"); !slices.Equal(p, []string{"9"}) {
		t.Errorf("table out at table_level 1: partitions %v, want [9]", p)
	}
}
