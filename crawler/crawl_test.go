package crawler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

func crawlerYAML(dir string, extra string) string {
	return fmt.Sprintf("crawler: c1\ndatabase: sales_db\ntargets:\n  - path: %s\n%s", filepath.Join(dir, "data", "sales"), extra)
}

func partitions(t *testing.T, st store.Store, table string) []string {
	t.Helper()
	var out []string
	for p, err := range st.Partitions(context.Background(), "sales_db", table) {
		if err != nil {
			t.Fatal(err)
		}
		v := strings.Join(p.Values, "/")
		if p.Deprecated {
			v += " (deprecated)"
		}
		out = append(out, v)
	}
	return out
}

func tableCols(tb catalog.Table) string {
	var parts []string
	for _, c := range tb.Columns {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return strings.Join(parts, ", ")
}

func TestPartitionsNamedAndUnnamed(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{
		"orders/year=2026/month=01/a.csv": dayRows(3, ""),
		"orders/year=2026/month=02/a.csv": dayRows(3, ""),
		"clicks/2026/01/a.json":           `{"id":1,"page":"a"}` + "\n",
		"clicks/2026/02/b.json":           `{"id":2,"page":"b"}` + "\n",
		"notes.txt":                       "above the table level\n",
	})
	st := newState(t)
	r := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "table_level: 1\n")), st)
	ctx := context.Background()
	orders, err := st.Table(ctx, "sales_db", "orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tableCols(orders), "order_id BIGINT, customer_id VARCHAR, amount DOUBLE"; got != want {
		t.Errorf("orders columns: got %s, want %s", got, want)
	}
	if got := []string{orders.PartitionKeys[0].Name, orders.PartitionKeys[1].Name}; !slices.Equal(got, []string{"year", "month"}) {
		t.Errorf("orders keys: got %v", got)
	}
	if got, want := partitions(t, st, "orders"), []string{"2026/01", "2026/02"}; !slices.Equal(got, want) {
		t.Errorf("orders partitions: got %v, want %v", got, want)
	}
	clicks, _ := st.Table(ctx, "sales_db", "clicks", 0)
	if clicks.Format != "json" || len(clicks.PartitionKeys) != 2 || clicks.PartitionKeys[0].Name != "partition_0" || clicks.PartitionKeys[1].Name != "partition_1" {
		t.Errorf("clicks: got %+v", clicks)
	}
	if r.Tables["orders"].Status != StatusCreated || r.Tables["orders"].PartitionsAdded != 2 {
		t.Errorf("report: got %+v", r.Tables["orders"])
	}
	if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "above table_level 1") {
		t.Errorf("skipped: got %+v, want notes.txt above the table level", r.Skipped)
	}
}

func TestMixedFormatsInOneFolder(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{
		"a.csv":    dayRows(2, ""),
		"b.csv":    dayRows(2, ""),
		"c.json":   `{"order_id":1}` + "\n",
		"d.csv.gz": gz(t, dayRows(2, "")),
	})
	st := newState(t)
	r := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "")), st)
	tb, err := st.Table(context.Background(), "sales_db", "sales", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Format != "csv" || tb.Compression != "" {
		t.Errorf("got %s %s, want csv (the kind most files have)", tb.Format, tb.Compression)
	}
	var reasons []string
	for _, s := range r.Skipped {
		reasons = append(reasons, filepath.Base(s.Path)+": "+s.Reason)
	}
	slices.Sort(reasons)
	if len(reasons) != 2 || !strings.HasPrefix(reasons[0], "c.json: json, unlike") || !strings.HasPrefix(reasons[1], "d.csv.gz: csv.gzip") {
		t.Errorf("skipped: got %q", reasons)
	}
}

// TestDisagreeingFolders: folders whose columns differ are one table with
// combine_compatible_schemas, a table each without it, and past
// max_tables the crawl fails having registered nothing.
func TestDisagreeingFolders(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{
		"a/x.csv": "id,name\n1,a\n",
		"b/x.csv": "id,city\n1,b\n",
		"c/x.csv": "id,name,extra\n1,a,3\n",
	})
	ctx := context.Background()
	st := newState(t)
	mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "")), st)
	tb, err := st.Table(ctx, "sales_db", "sales", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tableCols(tb), "id BIGINT, name VARCHAR, city VARCHAR, extra BIGINT"; got != want {
		t.Errorf("combined: got %s, want %s", got, want)
	}
	if got := partitions(t, st, "sales"); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("partitions: got %v", got)
	}

	st = newState(t)
	r := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "combine_compatible_schemas: false\n")), st)
	tables, _ := st.Tables(ctx, "sales_db")
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) || len(r.Tables) != 3 {
		t.Errorf("split: got tables %v", names)
	}

	st = newState(t)
	_, err = Crawl(ctx, crawlerFile(t, dir, crawlerYAML(dir, "combine_compatible_schemas: false\nmax_tables: 2\n")), st, Options{})
	var tm *TooManyTablesError
	if !errors.As(err, &tm) || len(tm.Tables) != 3 || !strings.Contains(err.Error(), "more than max_tables 2") {
		t.Fatalf("got %v, want too many tables", err)
	}
	if tables, _ := st.Tables(ctx, "sales_db"); len(tables) != 0 {
		t.Errorf("a crawl past max_tables registered %d tables", len(tables))
	}
	runs, _ := st.Runs(ctx, "crawler:c1", store.RunQuery{})
	if len(runs) != 1 || runs[0].Status != store.StatusFailed {
		t.Errorf("runs: got %+v, want one failed", runs)
	}
}

// TestSchemaChangePolicies: a new column and a widened one between crawls,
// and a partition and a table whose files are gone, under each policy.
func TestSchemaChangePolicies(t *testing.T) {
	tests := []struct {
		update, delete  string
		status          string
		version         int64
		cols            string
		parts           []string
		oldTable        string // the status of the table whose files are gone
		oldTableVersion int64
	}{
		{"update", "deprecate", StatusUpdated, 2, "order_id BIGINT, customer_id VARCHAR, amount VARCHAR, coupon VARCHAR",
			[]string{"1 (deprecated)", "2", "3"}, StatusDeprecated, 2},
		{"update", "delete", StatusUpdated, 2, "order_id BIGINT, customer_id VARCHAR, amount VARCHAR, coupon VARCHAR",
			[]string{"2", "3"}, StatusDeleted, 0},
		{"log", "log", StatusLogged, 1, "order_id BIGINT, customer_id VARCHAR, amount DOUBLE",
			[]string{"1", "2", "3"}, StatusGone, 1},
	}
	for _, tc := range tests {
		t.Run(tc.update+"_"+tc.delete, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "data", "sales")
			writeTree(t, root, map[string]string{
				"orders/day=1/a.csv": dayRows(3, ""),
				"orders/day=2/a.csv": dayRows(3, ""),
				"returns/a.csv":      "id,n\n1,2\n",
			})
			c := crawlerFile(t, dir, crawlerYAML(dir, fmt.Sprintf("table_level: 1\nschema_change_policy: {update: %s, delete: %s}\n", tc.update, tc.delete)))
			st := newState(t)
			mustCrawl(t, c, st)
			os.RemoveAll(filepath.Join(root, "orders", "day=1"))
			os.RemoveAll(filepath.Join(root, "returns"))
			writeTree(t, root, map[string]string{"orders/day=3/a.csv": "order_id,customer_id,amount,coupon\n4,c1,n/a,X1\n"})
			r := mustCrawl(t, c, st)
			ctx := context.Background()
			tb, err := st.Table(ctx, "sales_db", "orders", 0)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Tables["orders"]
			if got.Status != tc.status || got.Version != tc.version || tb.Version != tc.version {
				t.Errorf("orders: got status %s version %d (catalog %d), want %s %d", got.Status, got.Version, tb.Version, tc.status, tc.version)
			}
			if tableCols(tb) != tc.cols {
				t.Errorf("columns: got %s, want %s", tableCols(tb), tc.cols)
			}
			if tc.status == StatusLogged && !slices.ContainsFunc(got.Changes, func(s string) bool { return strings.Contains(s, "coupon VARCHAR added (not applied") }) {
				t.Errorf("logged changes: got %q", got.Changes)
			}
			if p := partitions(t, st, "orders"); !slices.Equal(p, tc.parts) {
				t.Errorf("partitions: got %v, want %v", p, tc.parts)
			}
			if got := r.Tables["returns"]; got == nil || got.Status != tc.oldTable {
				t.Errorf("returns: got %+v, want %s", got, tc.oldTable)
			}
			ret, err := st.Table(ctx, "sales_db", "returns", 0)
			switch {
			case tc.oldTableVersion == 0 && !errors.Is(err, catalog.ErrNotFound):
				t.Errorf("returns: got %v, want dropped", err)
			case tc.oldTableVersion > 0 && (ret.Version != tc.oldTableVersion || ret.Deprecated != (tc.delete == "deprecate")):
				t.Errorf("returns: got version %d deprecated %v", ret.Version, ret.Deprecated)
			}
			// The same crawl again changes nothing more.
			again := mustCrawl(t, c, st)
			if s := again.Tables["orders"].Status; s != StatusUnchanged && s != StatusLogged {
				t.Errorf("third crawl: orders %s, want unchanged", s)
			}
			if n := again.Tables["orders"].PartitionsAdded; n != 0 {
				t.Errorf("third crawl added %d partitions", n)
			}
		})
	}
}

// TestIncremental: over a prefix that grows by a day's folder,
// new_folders_only opens only the new folder's sample, and
// new_files_only only the new files; everything opens every folder's.
func TestIncremental(t *testing.T) {
	files := map[string]string{}
	for day := 1; day <= 5; day++ {
		for f := range 4 {
			files[fmt.Sprintf("day=%02d/part-%d.csv", day, f)] = dayRows(5, "")
		}
	}
	for _, mode := range []string{"everything", "new_folders_only", "new_files_only"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "data", "sales")
			writeTree(t, root, files)
			st := newState(t)
			yaml := fmt.Sprintf("crawler: c1\ndatabase: sales_db\nsample_files: 2\nrecrawl: %s\ntargets:\n  - path: counting://%s\n", mode, root)
			c := crawlerFile(t, dir, yaml)
			resetOpened()
			r := mustCrawl(t, c, st)
			if got := len(resetOpened()); got != 10 || r.FilesOpened != 10 {
				t.Fatalf("first crawl opened %d files (report %d), want 2 per folder: 10", got, r.FilesOpened)
			}
			added := map[string]string{"day=06/part-0.csv": dayRows(5, ""), "day=06/part-1.csv": dayRows(5, ""), "day=06/part-2.csv": dayRows(5, ", coupon")}
			added["day=06/part-2.csv"] = strings.Replace(dayRows(5, ",coupon"), ",x", ",X1", -1)
			added["day=03/part-9.csv"] = dayRows(5, "") // a late file in an old folder
			writeTree(t, root, added)
			r = mustCrawl(t, c, st)
			got := resetOpened()
			var keys []string
			for k := range got {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			var want []string
			switch mode {
			case "everything":
				want = []string{"day=01/part-0.csv", "day=01/part-3.csv", "day=02/part-0.csv", "day=02/part-3.csv", "day=03/part-0.csv",
					"day=03/part-9.csv", "day=04/part-0.csv", "day=04/part-3.csv", "day=05/part-0.csv", "day=05/part-3.csv",
					"day=06/part-0.csv", "day=06/part-2.csv"}
			case "new_folders_only":
				want = []string{"day=06/part-0.csv", "day=06/part-2.csv"}
			case "new_files_only":
				want = []string{"day=03/part-9.csv", "day=06/part-0.csv", "day=06/part-2.csv"}
			}
			if !slices.Equal(keys, want) {
				t.Errorf("second crawl opened %v, want %v", keys, want)
			}
			if r.FilesOpened != int64(len(want)) || r.FilesNew != 4 {
				t.Errorf("report: opened %d new %d, want %d and 4", r.FilesOpened, r.FilesNew, len(want))
			}
			tb := r.Tables["sales"]
			if tb.Status != StatusUpdated || tb.PartitionsAdded != 1 || tb.Partitions != 6 || !strings.Contains(tableCols(catalog.Table{Columns: tb.Columns}), "coupon VARCHAR") {
				t.Errorf("sales: got %+v", tb)
			}
			// Nothing new: nothing opened.
			r = mustCrawl(t, c, st)
			if n := len(resetOpened()); mode != "everything" && (n != 0 || r.FilesOpened != 0) {
				t.Errorf("third crawl opened %d files, want none", n)
			}
		})
	}
}

func TestLeaseHeld(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, filepath.Join(dir, "data", "sales"), map[string]string{"a.csv": dayRows(2, "")})
	st := newState(t)
	c := crawlerFile(t, dir, crawlerYAML(dir, ""))
	if _, err := st.AcquireLease(context.Background(), c.Job(), store.Holder{ID: "other"}, 60e9); err != nil {
		t.Fatal(err)
	}
	_, err := Crawl(context.Background(), c, st, Options{})
	if !errors.Is(err, store.ErrLeaseHeld) {
		t.Fatalf("got %v, want the lease held", err)
	}
}

// racing is a state store where another writer changes the catalog right
// after the crawl has read it.
type racing struct {
	store.Store
	race func()
}

func (r *racing) Tables(ctx context.Context, db string) ([]catalog.Table, error) {
	ts, err := r.Store.Tables(ctx, db)
	if r.race != nil {
		r.race()
		r.race = nil
	}
	return ts, err
}

// TestConflictChangesNothing: a table changed by someone else during a
// crawl fails the crawl's commit; neither the catalog nor the bookmark
// moved, and the next crawl registers what the failed one found.
func TestConflictChangesNothing(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"day=1/a.csv": dayRows(2, "")})
	c := crawlerFile(t, dir, crawlerYAML(dir, "recrawl: new_folders_only\n"))
	st := newState(t)
	mustCrawl(t, c, st)
	ctx := context.Background()
	head, _ := st.Head(ctx, c.Job())
	r := &racing{Store: st, race: func() {
		tb, _ := st.Table(ctx, "sales_db", "sales", 0)
		tb.Parameters = map[string]string{"owner": "someone else"}
		if err := st.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: tb, Base: tb.Version}}}); err != nil {
			t.Error(err)
		}
	}}
	// A new folder with a new column: the crawl wants a version too.
	writeTree(t, root, map[string]string{"day=2/a.csv": dayRows(2, ",coupon")})
	if _, err := Crawl(ctx, c, r, Options{}); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("got %v, want a catalog conflict", err)
	}
	if h, _ := st.Head(ctx, c.Job()); h.Version != head.Version {
		t.Errorf("the bookmark moved: version %d, want %d", h.Version, head.Version)
	}
	if p := partitions(t, st, "sales"); !slices.Equal(p, []string{"1"}) {
		t.Errorf("partitions after the conflict: got %v, want [1]", p)
	}
	rep := mustCrawl(t, c, st)
	if got := rep.Tables["sales"]; got.Status != StatusUpdated || got.Version != 3 || got.PartitionsAdded != 1 {
		t.Errorf("the crawl after: got %+v", got)
	}
}

// TestIncrementalSplitTables: a table folder split into a table per
// subfolder is not sampled again in full by an incremental crawl.
func TestIncrementalSplitTables(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"a/x.csv": "id,name\n1,a\n", "b/x.csv": "id,city\n1,b\n"})
	c := crawlerFile(t, dir, fmt.Sprintf("crawler: c1\ndatabase: sales_db\ncombine_compatible_schemas: false\nrecrawl: new_folders_only\n"+
		"targets:\n  - path: counting://%s\n", root))
	st := newState(t)
	resetOpened()
	if r := mustCrawl(t, c, st); len(r.Tables) != 2 || len(resetOpened()) != 2 {
		t.Fatalf("first crawl: got %d tables", len(r.Tables))
	}
	writeTree(t, root, map[string]string{"c/x.csv": "id,zone\n1,z\n"})
	r := mustCrawl(t, c, st)
	if got := resetOpened(); len(got) != 1 || got["c/x.csv"] != 1 {
		t.Errorf("second crawl opened %v, want only c/x.csv", got)
	}
	if len(r.Tables) != 3 || r.Tables["c"] == nil || r.Tables["c"].Status != StatusCreated {
		t.Errorf("second crawl: got tables %v", r.Tables)
	}
}

// TestCrawlFolderWithTwoEquals: a partition folder named k=v=w is not
// registered (the engines refuse it) but skipped, naming the folder and
// what is wrong with it; its siblings are registered.
func TestCrawlFolderWithTwoEquals(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"day=1/a.csv": dayRows(3, ""), "day=2/a.csv": dayRows(2, ""), "day=3=4/a.csv": dayRows(2, "")})
	st := newState(t)
	rep := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "")), st)
	if p := partitions(t, st, "sales"); !slices.Equal(p, []string{"1", "2"}) {
		t.Errorf("partitions: got %v, want [1 2]", p)
	}
	found := false
	for _, s := range rep.Skipped {
		if strings.Contains(s.Path, "day=3=4") && strings.Contains(s.Reason, `"day=3=4"`) && strings.Contains(s.Reason, "more than one '='") {
			found = true
		}
	}
	if !found {
		t.Errorf("skipped: got %+v, want day=3=4 skipped naming the folder and its second '='", rep.Skipped)
	}
}

// TestCrawlKeyCaseDiffers: a partition folder whose key is spelled in
// another case than its siblings' (Day=5 beside day=1) is skipped naming
// it; the table keeps the key its other folders name (it was named
// partition_0 with values "day=1", which no job could read: the engine
// found a column day the table did not have).
func TestCrawlKeyCaseDiffers(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data", "sales")
	writeTree(t, root, map[string]string{"day=1/a.csv": dayRows(3, ""), "day=2/a.csv": dayRows(2, ""), "Day=5/a.csv": dayRows(2, "")})
	st := newState(t)
	rep := mustCrawl(t, crawlerFile(t, dir, crawlerYAML(dir, "")), st)
	tb, err := st.Table(context.Background(), "sales_db", "sales", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.PartitionKeys) != 1 || tb.PartitionKeys[0].Name != "day" {
		t.Errorf("partition keys: got %v, want [day]", tb.PartitionKeys)
	}
	if p := partitions(t, st, "sales"); !slices.Equal(p, []string{"1", "2"}) {
		t.Errorf("partitions: got %v, want [1 2]", p)
	}
	found := false
	for _, s := range rep.Skipped {
		found = found || strings.Contains(s.Path, "Day=5") && strings.Contains(s.Reason, `"Day=5"`)
	}
	if !found {
		t.Errorf("skipped: got %+v, want Day=5 skipped naming it", rep.Skipped)
	}
}
