package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
)

// The seed's whole story, through the binary, as the README's "From crawl
// to catalog-updating sink" tells it: Monday's sales/ folder is crawled
// into sales_db.orders_raw; a job reads it by name (catalog:, ctx:) every
// day after the day's crawl registered the new day=... folder, and its
// sink registers sales_db.orders_clean partitioned by product; on Thursday
// a column appears, under each schema_evolution mode in a world of its
// own; a rewind with --purge-output keeps the catalog's partitions equal
// to the folders that hold files; and the DuckDB DDL of the sink table
// counts every record once. Worlds run on local disks and on versitygw,
// with the state in SQLite, and the main path with the state in each store
// of stateStores (adding a store there adds it here).

// storyWorld is one world of the story: its folders, state store, crawler
// and job files.
type storyWorld struct {
	t       *testing.T
	be      backend
	dir     string
	sales   place // the crawled input, sales/day=.../
	out     place // the sink's folder
	state   string
	env     []string
	mode    string // the source's schema_evolution
	job     string
	crawler string
}

func newStoryWorld(t *testing.T, be backend, ss stateStore, mode string) *storyWorld {
	t.Helper()
	dir := t.TempDir()
	w := &storyWorld{t: t, be: be, dir: dir, sales: newPlace(t, be, dir, "sales"), out: newPlace(t, be, dir, "clean"),
		mode: mode, job: filepath.Join(dir, "job.yaml"), crawler: filepath.Join(dir, "crawler.yaml")}
	var env []string
	w.state, env = ss.url(t)
	if be == onS3 {
		w.env = sharedS3(t).env()
	}
	w.env = append(w.env, env...)
	w.env = append(w.env, "TMPDIR="+filepath.Join(dir, "tmp"))
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.crawler, []byte(fmt.Sprintf(`crawler: sales-crawler
state: %q
database: sales_db
targets:
  - path: %q
    table: orders_raw
recrawl: new_folders_only
`, w.state, w.sales.loc())))
	writeFile(t, w.job, []byte(fmt.Sprintf(`job: sales
state: %q
sources:
  - ctx: orders_source
    catalog: sales_db.orders_raw
    schema_evolution: %s
sinks:
  - ctx: orders_sink
    path: %q
    format: parquet
    partition_by: [product]
    catalog: {table: sales_db.orders_clean, update: true}
`, w.state, mode, w.out.loc())))
	return w
}

// tidemark runs the binary in the world's folder.
func (w *storyWorld) tidemark(code int, args ...string) result {
	w.t.Helper()
	r := tidemark(w.t, w.dir, w.env, args...)
	if r.code != code {
		w.t.Fatalf("got exit %d, want %d\n%v", r.code, code, r)
	}
	return r
}

// day lands a day's files under sales/day=D/.
func (w *storyWorld) day(d string, files map[string]string) {
	w.t.Helper()
	for name, content := range files {
		w.sales.put(w.t, "day="+d+"/"+name, []byte(content))
	}
}

// crawl runs the crawler and returns its report.
func (w *storyWorld) crawl() crawlReport {
	w.t.Helper()
	return crawlJSON(w.t, w.tidemark(0, "crawl", w.crawler, "--json"))
}

// run runs the job, requiring exit code.
func (w *storyWorld) run(code int) (runSummary, result) {
	w.t.Helper()
	r := w.tidemark(code, "run", w.job, "--json")
	var s runSummary
	if code == 0 {
		s = decodeOne[runSummary](w.t, r)
	}
	return s, r
}

// show is `catalog show DB.TABLE --json`.
func (w *storyWorld) show(table string) catalogShow {
	w.t.Helper()
	return decodeOne[catalogShow](w.t, w.tidemark(0, "catalog", "show", table, "--json", "--state", w.state))
}

// bookmark is the part of `bookmark show --json` the story reads.
func (w *storyWorld) bookmark() evoBookmark {
	w.t.Helper()
	r := w.tidemark(0, "bookmark", "show", w.job, "--json")
	var b evoBookmark
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil {
		w.t.Fatalf("bookmark show --json: %v\n%s", err, r.stdout)
	}
	return b
}

// rows reads the sink back with DuckDB over every published file by name
// (hive partitions give product): "v|v|..." of cols, NULL for a null,
// ordered by order_id.
func (w *storyWorld) rows(cols ...string) []string {
	w.t.Helper()
	exprs := make([]string, len(cols))
	for i, c := range cols {
		exprs[i] = fmt.Sprintf("coalesce(CAST(%q AS VARCHAR), 'NULL')", c)
	}
	return duckStrings(w.t, fmt.Sprintf(
		"SELECT concat_ws('|', %s) FROM read_parquet('%s/product=*/*.parquet', union_by_name=true, hive_partitioning=true) ORDER BY order_id",
		strings.Join(exprs, ", "), w.out.mirror(w.t)))
}

// folders lists the product folders of the sink that hold files.
func (w *storyWorld) folders() []string {
	w.t.Helper()
	dir := w.out.mirror(w.t)
	seen := map[string]bool{}
	for _, file := range sinkFiles(w.t, dir) {
		rel, _ := filepath.Rel(dir, file)
		seen[strings.TrimPrefix(strings.SplitN(filepath.ToSlash(rel), "/", 2)[0], "product=")] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// assertPartitions checks that the catalog's partitions of orders_clean
// are the sink's folders that hold files, each at its folder.
func (w *storyWorld) assertPartitions(what string, want ...string) {
	w.t.Helper()
	show := w.show("sales_db.orders_clean")
	got := show.products()
	sort.Strings(got)
	if folders := w.folders(); !slices.Equal(got, folders) || !slices.Equal(folders, want) {
		w.t.Errorf("%s: catalog partitions %v, sink folders holding files %v; want both %v", what, got, folders, want)
	}
	base := strings.TrimSuffix(w.out.loc(), "/")
	for _, p := range show.Partitions {
		if loc := base + "/product=" + p.Values["product"] + "/"; strings.TrimSuffix(p.Location, "/") != strings.TrimSuffix(loc, "/") {
			w.t.Errorf("%s: partition %v at %s, want %s", what, p.Values, p.Location, loc)
		}
	}
}

// ddlCount runs `catalog ddl sales_db.orders_clean --dialect duckdb` in a
// new DuckDB and returns its rows and distinct order ids. On S3 the
// location is read from a mirror of the sink.
func (w *storyWorld) ddlCount() (rows, distinct int64) {
	w.t.Helper()
	out := decodeOne[struct {
		Statements []string `json:"statements"`
	}](w.t, w.tidemark(0, "catalog", "ddl", "sales_db.orders_clean", "--dialect", "duckdb", "--json", "--state", w.state))
	mirror := ""
	if w.be == onS3 {
		mirror = w.out.mirror(w.t)
	}
	return countDDL(w.t, out.Statements, strings.TrimSuffix(w.out.loc(), "/"), mirror)
}

const storyHeader = "order_id,customer_id,product,amount\n"

// storyWeek is Monday to Wednesday: each day its folder lands, the
// crawler registers it (the first crawl creates sales_db.orders_raw), and
// the job reads that day's files only. It returns the runs.
func storyWeek(w *storyWorld) []runSummary {
	t := w.t
	days := []struct {
		d     string
		files map[string]string
	}{
		{"2026-12-07", map[string]string{
			"orders-1.csv": storyHeader + "1,c1,widget,10\n2,c2,gadget,20\n",
			"orders-2.csv": storyHeader + "3,c3,widget,30\n"}},
		{"2026-12-08", map[string]string{"orders-1.csv": storyHeader + "4,c1,gizmo,40\n5,c2,widget,50\n"}},
		{"2026-12-09", map[string]string{"orders-1.csv": storyHeader + "6,c3,gadget,60\n"}},
	}
	var runs []runSummary
	for i, day := range days {
		w.day(day.d, day.files)
		rep := w.crawl()
		tb := rep.Tables["orders_raw"]
		wantStatus := "unchanged"
		if i == 0 {
			wantStatus = "created"
		}
		if tb.Status != wantStatus || tb.Version != 1 || tb.Partitions != i+1 || tb.PartitionsAdded != 1 {
			t.Fatalf("crawl of %s: got %+v, want orders_raw %s, version 1, %d partitions, 1 added", day.d, rep, wantStatus, i+1)
		}
		if i == 0 {
			if got, want := columnsOf(rep, "orders_raw"), "order_id BIGINT, customer_id VARCHAR, product VARCHAR, amount BIGINT"; got != want {
				t.Errorf("orders_raw columns: got %s, want %s", got, want)
			}
		} else if rep.FilesOpened != 1 {
			t.Errorf("crawl of %s opened %d files, want the new folder's 1", day.d, rep.FilesOpened)
		}
		s, _ := w.run(0)
		if got, want := s.source().Files, int64(len(day.files)); got != want {
			t.Errorf("run of %s read %d files, want the day's %d", day.d, got, want)
		}
		runs = append(runs, s)
	}
	// Nothing new: the run reads nothing (bookmarks per ctx).
	if s, _ := w.run(0); s.source().Files != 0 {
		t.Errorf("a run with nothing new read %d files", s.source().Files)
	}
	if got, want := w.rows("order_id", "customer_id", "product", "amount", "day"), []string{
		"1|c1|widget|10|2026-12-07", "2|c2|gadget|20|2026-12-07", "3|c3|widget|30|2026-12-07",
		"4|c1|gizmo|40|2026-12-08", "5|c2|widget|50|2026-12-08", "6|c3|gadget|60|2026-12-09",
	}; !slices.Equal(got, want) {
		t.Errorf("sink after Wednesday:\ngot  %q\nwant %q", got, want)
	}
	clean := w.show("sales_db.orders_clean")
	if clean.Format != "parquet" || clean.Version != 1 {
		t.Errorf("orders_clean: format %s version %d, want parquet 1", clean.Format, clean.Version)
	}
	// The day partition key is a column of the output; under rescue so is
	// _rescued_data, on every row.
	wantCols := "[{order_id BIGINT} {customer_id VARCHAR} {amount BIGINT} {day VARCHAR}] [{product VARCHAR}]"
	if w.mode == "rescue" {
		wantCols = "[{order_id BIGINT} {customer_id VARCHAR} {amount BIGINT} {day VARCHAR} {_rescued_data VARCHAR}] [{product VARCHAR}]"
	}
	if got, want := fmt.Sprint(clean.Columns, clean.PartitionKeys), wantCols; got != want {
		t.Errorf("orders_clean columns and keys: got %s, want %s", got, want)
	}
	w.assertPartitions("after Wednesday", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 6 || d != 6 {
		t.Errorf("DuckDB DDL after Wednesday: %d rows, %d distinct; want 6 once", n, d)
	}
	return runs
}

// thursday lands Thursday's folder, with the new coupon column and a new
// product, and crawls it: orders_raw gets version 2 with coupon.
func thursday(w *storyWorld, extra map[string]string) {
	t := w.t
	files := map[string]string{"orders-1.csv": "order_id,customer_id,product,amount,coupon\n7,c1,widget,70,SAVE10\n8,c2,doohickey,80,\n"}
	for k, v := range extra {
		files[k] = v
	}
	w.day("2026-12-10", files)
	rep := w.crawl()
	tb := rep.Tables["orders_raw"]
	if tb.Status != "updated" || tb.Version != 2 || tb.Partitions != 4 {
		t.Fatalf("Thursday's crawl: got %+v, want orders_raw updated to version 2 with 4 partitions", tb)
	}
	if got := columnsOf(rep, "orders_raw"); !strings.Contains(got, "coupon VARCHAR") {
		t.Errorf("orders_raw version 2 columns: got %s, want coupon", got)
	}
}

// TestStory is the story under each schema_evolution mode on each
// backend, with the state in SQLite.
func TestStory(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, be backend) {
		for _, mode := range []string{"fail", "add_new_columns", "rescue", "none"} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				storyModes[mode](newStoryWorld(t, be, stateStores[0], mode))
			})
		}
	})
}

// TestStoryStateStores is the main path (add_new_columns, rewind, purge,
// DDL) with the state in each shared state store.
func TestStoryStateStores(t *testing.T) {
	t.Parallel()
	for _, ss := range stateStores[1:] {
		t.Run(ss.name, func(t *testing.T) {
			t.Parallel()
			storyAddNewColumns(newStoryWorld(t, local, ss, "add_new_columns"))
		})
	}
}

var storyModes = map[string]func(w *storyWorld){
	"fail":            storyFail,
	"add_new_columns": storyAddNewColumns,
	"rescue":          storyRescue,
	"none":            storyNone,
}

// storyFail: Thursday's run fails naming the file and the column, the
// sink, catalog and bookmark stay as Wednesday left them.
func storyFail(w *storyWorld) {
	t := w.t
	storyWeek(w)
	before := w.bookmark()
	thursday(w, nil)
	_, r := w.run(1)
	assertMentions(t, r, "day=2026-12-10/orders-1.csv", "coupon")
	if got := w.rows("order_id"); len(got) != 6 {
		t.Errorf("sink after the failed run: got %q, want Wednesday's 6 rows", got)
	}
	if v := w.show("sales_db.orders_clean").Version; v != 1 {
		t.Errorf("orders_clean version after the failed run: got %d, want 1", v)
	}
	w.assertPartitions("after the failed run", "gadget", "gizmo", "widget")
	if got, want := w.bookmark().storySchema(), before.storySchema(); got != want {
		t.Errorf("schema after the failed run: got %s, want %s", got, want)
	}
	// Switching the mode is not a change of the source: the next run reads
	// Thursday's file, no reset needed.
	job, err := os.ReadFile(w.job)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.job, []byte(strings.Replace(string(job), "schema_evolution: fail", "schema_evolution: add_new_columns", 1)))
	if s, _ := w.run(0); s.source().Files != 1 {
		t.Errorf("the run after switching read %d files, want Thursday's 1", s.source().Files)
	}
	equalStrings(t, "sink after switching", w.rows("order_id", "coupon"), []string{
		"1|NULL", "2|NULL", "3|NULL", "4|NULL", "5|NULL", "6|NULL", "7|SAVE10", "8|NULL"})
	if v := w.show("sales_db.orders_clean").Version; v != 2 {
		t.Errorf("orders_clean version after switching: got %d, want 2", v)
	}
	w.assertPartitions("after switching", "doohickey", "gadget", "gizmo", "widget")
}

// storyAddNewColumns: Thursday's run adds coupon (NULL for earlier rows),
// orders_clean gets version 2 with it and the doohickey partition; a
// rewind to Wednesday with --purge-output drops that partition (its only
// files are purged), and the rerun brings it back, every record once.
func storyAddNewColumns(w *storyWorld) {
	t := w.t
	runs := storyWeek(w)
	thursday(w, nil)
	thu, _ := w.run(0)
	if thu.source().Files != 1 {
		t.Errorf("Thursday's run read %d files, want 1", thu.source().Files)
	}
	all := []string{"1|widget|10|NULL", "2|gadget|20|NULL", "3|widget|30|NULL", "4|gizmo|40|NULL",
		"5|widget|50|NULL", "6|gadget|60|NULL", "7|widget|70|SAVE10", "8|doohickey|80|NULL"}
	equalStrings(t, "sink after Thursday", w.rows("order_id", "product", "amount", "coupon"), all)
	clean := w.show("sales_db.orders_clean")
	if clean.Version != 2 || !slices.ContainsFunc(clean.Columns, func(c catalog.Column) bool { return c.Name == "coupon" && c.Type == "VARCHAR" }) {
		t.Errorf("orders_clean after Thursday: version %d columns %v, want version 2 with coupon VARCHAR", clean.Version, clean.Columns)
	}
	if len(clean.Versions) != 2 {
		t.Errorf("orders_clean versions: got %+v, want 2", clean.Versions)
	}
	b := w.bookmark()
	vs := b.Sources["orders_source"].Versions
	if len(vs) != 2 || fmt.Sprint(vs[1].Added) != "[coupon]" || vs[1].RunID != thu.RunID {
		t.Errorf("schema versions: got %+v, want a 2 adding coupon in run %s", vs, thu.RunID)
	}
	w.assertPartitions("after Thursday", "doohickey", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 8 || d != 8 {
		t.Errorf("DuckDB DDL after Thursday: %d rows, %d distinct; want 8 once", n, d)
	}

	// Rewind to Wednesday, purging Thursday's output.
	r := w.tidemark(0, "bookmark", "reset", w.job, "--to-run", runs[2].RunID, "--purge-output")
	assertMentions(t, r, "purged")
	equalStrings(t, "sink after the rewind", w.rows("order_id", "product", "amount"),
		[]string{"1|widget|10", "2|gadget|20", "3|widget|30", "4|gizmo|40", "5|widget|50", "6|gadget|60"})
	w.assertPartitions("after the rewind", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 6 || d != 6 {
		t.Errorf("DuckDB DDL after the rewind: %d rows, %d distinct; want 6 once", n, d)
	}
	if got := w.bookmark().Sources["orders_source"].Versions; len(got) > 1 {
		t.Errorf("schema versions after the rewind: got %+v, want Wednesday's", got)
	}

	// The rerun reads Thursday again: every record once, every partition.
	if s, _ := w.run(0); s.source().Files != 1 {
		t.Errorf("the rerun read %d files, want Thursday's 1", s.source().Files)
	}
	equalStrings(t, "sink after the rerun", w.rows("order_id", "product", "amount", "coupon"), all)
	w.assertPartitions("after the rerun", "doohickey", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 8 || d != 8 {
		t.Errorf("DuckDB DDL after the rerun: %d rows, %d distinct; want 8 once", n, d)
	}
}

// storyRescue: coupon and Thursday's amount "n/a" go to _rescued_data
// with the file's name; the schema and orders_clean's columns stay, but
// for _rescued_data.
func storyRescue(w *storyWorld) {
	t := w.t
	storyWeek(w)
	thursday(w, map[string]string{"orders-2.csv": storyHeader + "9,c3,gizmo,n/a\n"})
	if s, _ := w.run(0); s.source().Files != 2 {
		t.Errorf("Thursday's run read %d files, want 2", s.source().Files)
	}
	equalStrings(t, "sink after Thursday", w.rows("order_id", "product", "amount", "_rescued_data"), []string{
		"1|widget|10|NULL", "2|gadget|20|NULL", "3|widget|30|NULL", "4|gizmo|40|NULL", "5|widget|50|NULL", "6|gadget|60|NULL",
		`7|widget|70|{"coupon":"SAVE10","_file":"day=2026-12-10/orders-1.csv"}`,
		`8|doohickey|80|NULL`,
		`9|gizmo|NULL|{"amount":"n/a","_file":"day=2026-12-10/orders-2.csv"}`,
	})
	if got, want := w.bookmark().storySchema(), "order_id BIGINT, customer_id VARCHAR, product VARCHAR, amount BIGINT, day VARCHAR"; got != want {
		t.Errorf("rescue keeps the schema: got %s, want %s", got, want)
	}
	clean := w.show("sales_db.orders_clean")
	if slices.ContainsFunc(clean.Columns, func(c catalog.Column) bool { return c.Name == "coupon" }) ||
		!slices.ContainsFunc(clean.Columns, func(c catalog.Column) bool { return c.Name == "amount" && c.Type == "BIGINT" }) {
		t.Errorf("orders_clean columns under rescue: got %v, want amount BIGINT and no coupon", clean.Columns)
	}
	w.assertPartitions("after Thursday", "doohickey", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 9 || d != 9 {
		t.Errorf("DuckDB DDL after Thursday: %d rows, %d distinct; want 9 once", n, d)
	}
}

// storyNone: coupon is ignored; the sink and orders_clean never get it.
func storyNone(w *storyWorld) {
	t := w.t
	storyWeek(w)
	thursday(w, nil)
	w.run(0)
	equalStrings(t, "sink after Thursday", w.rows("order_id", "product", "amount"), []string{
		"1|widget|10", "2|gadget|20", "3|widget|30", "4|gizmo|40", "5|widget|50", "6|gadget|60", "7|widget|70", "8|doohickey|80"})
	clean := w.show("sales_db.orders_clean")
	if clean.Version != 1 || slices.ContainsFunc(clean.Columns, func(c catalog.Column) bool { return c.Name == "coupon" }) {
		t.Errorf("orders_clean under none: version %d columns %v, want version 1 without coupon", clean.Version, clean.Columns)
	}
	if got := w.bookmark().Sources["orders_source"].Versions; len(got) > 1 {
		t.Errorf("schema versions under none: got %+v, want no new one", got)
	}
	w.assertPartitions("after Thursday", "doohickey", "gadget", "gizmo", "widget")
	if n, d := w.ddlCount(); n != 8 || d != 8 {
		t.Errorf("DuckDB DDL after Thursday: %d rows, %d distinct; want 8 once", n, d)
	}
}

// storySchema is orders_source's recorded schema as "name TYPE, ...".
func (b evoBookmark) storySchema() string {
	var parts []string
	for _, c := range b.Sources["orders_source"].Schema {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return strings.Join(parts, ", ")
}

// TestStoryJobCrawler: the job declares the crawler (crawler: FILE), so
// each day's `tidemark run` crawls the new folder before it plans, and no
// one has to crawl by hand; Thursday's column arrives as under
// add_new_columns.
func TestStoryJobCrawler(t *testing.T) {
	t.Parallel()
	w := newStoryWorld(t, local, stateStores[0], "add_new_columns")
	job, err := os.ReadFile(w.job)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, w.job, []byte(strings.Replace(string(job), "sources:\n", "crawler: crawler.yaml\nsources:\n", 1)))
	for i, d := range []string{"2026-12-07", "2026-12-08", "2026-12-09", "2026-12-10"} {
		file := storyHeader + fmt.Sprintf("%d,c1,widget,%d\n", i+1, 10*(i+1))
		if i == 3 {
			file = "order_id,customer_id,product,amount,coupon\n4,c1,widget,40,SAVE10\n"
		}
		w.day(d, map[string]string{"orders-1.csv": file})
		s, r := w.run(0)
		assertMentions(t, r, "table sales_db.orders_raw:")
		if s.source().Files != 1 {
			t.Errorf("run of %s read %d files, want the day's 1\n%v", d, s.source().Files, r)
		}
	}
	if raw := w.show("sales_db.orders_raw"); raw.Version != 2 || len(raw.Partitions) != 4 {
		t.Errorf("orders_raw: version %d, %d partitions; want 2 and 4", raw.Version, len(raw.Partitions))
	}
	if n, d := w.ddlCount(); n != 4 || d != 4 {
		t.Errorf("DuckDB DDL: %d rows, %d distinct; want 4 once", n, d)
	}
}
