package e2e

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store/sqlite"
)

// The catalog story, through the binary: a table registered in the
// catalog (here by the test, through the state store, as a crawl would),
// a job reading it by name over three days, pruned by
// push_down_predicate, a sink registering sales_db.orders_clean
// partitioned by product, a rewind with --purge-output that keeps catalog
// and files in step, and the DuckDB DDL counting every record once.

// catalogJobYAML is the job: the raw table by name, the clean table
// registered by the sink.
func catalogJobYAML(output string) string {
	return `job: sales
sources:
  - ctx: orders_source
    catalog: sales_db.orders_raw
    push_down_predicate: "day >= '2026-03-01'"
transforms:
  clean_orders: |
    ` + cleanOrders + `
sinks:
  - ctx: orders_sink
    path: "` + output + `"
    format: parquet
    partition_by: [product]
    catalog: {table: sales_db.orders_clean, update: true}
`
}

// catalogState opens the fixture's state store (.tidemark/state.db next
// to the job file) to write the catalog as a crawler would.
func (f *fixture) applyCatalog(c catalog.Changes) {
	f.t.Helper()
	st, err := sqlite.Open(f.t.Context(), filepath.Join(f.dir, ".tidemark", "state.db"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer st.Close()
	if err := st.ApplyCatalog(f.t.Context(), c); err != nil {
		f.t.Fatal(err)
	}
}

// catalogShow is `catalog show --json` of one table.
type catalogShow struct {
	Database      string           `json:"database"`
	Table         string           `json:"table"`
	Location      string           `json:"location"`
	Format        string           `json:"format"`
	Version       int64            `json:"version"`
	Columns       []catalog.Column `json:"columns"`
	PartitionKeys []catalog.Column `json:"partition_keys"`
	Partitions    []struct {
		Values   map[string]string `json:"values"`
		Location string            `json:"location"`
	} `json:"partitions"`
	Versions []struct {
		Version int64  `json:"version"`
		Summary string `json:"summary"`
	} `json:"versions"`
}

func (f *fixture) catalogShow(name string) catalogShow {
	f.t.Helper()
	r := f.tidemark(nil, "catalog", "show", name, "--json", "--state", filepath.Join(f.dir, ".tidemark", "state.db"))
	if r.code != 0 {
		f.t.Fatalf("catalog show %s: exit %d\n%v", name, r.code, r)
	}
	return decodeOne[catalogShow](f.t, r)
}

// partitionProducts lists the product values of a table's partitions.
func (s catalogShow) products() []string {
	var out []string
	for _, p := range s.Partitions {
		out = append(out, p.Values["product"])
	}
	return out
}

// sinkProducts lists the product folders of the sink that hold files.
func (f *fixture) sinkProducts() []string {
	f.t.Helper()
	seen := map[string]bool{}
	dir := f.outDir()
	for _, file := range sinkFiles(f.t, dir) {
		rel, _ := filepath.Rel(dir, file)
		seg := strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]
		seen[strings.TrimPrefix(seg, "product=")] = true
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ddlCount runs the DuckDB DDL of sales_db.orders_clean in a new DuckDB
// and counts its rows and distinct order ids. On S3 the table's location
// is read from a mirror of the output folder.
func (f *fixture) ddlCount() (rows, distinct int64) {
	f.t.Helper()
	r := f.tidemark(nil, "catalog", "ddl", "sales_db.orders_clean", "--dialect", "duckdb", "--json",
		"--state", filepath.Join(f.dir, ".tidemark", "state.db"))
	if r.code != 0 {
		f.t.Fatalf("catalog ddl: exit %d\n%v", r.code, r)
	}
	out := decodeOne[struct {
		Statements []string `json:"statements"`
	}](f.t, r)
	db, err := sql.Open("duckdb", "")
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	loc := strings.TrimSuffix(f.out.loc(), "/")
	for _, s := range out.Statements {
		if f.be == onS3 {
			s = strings.ReplaceAll(s, loc, f.outDir())
		}
		if _, err := db.Exec(s); err != nil {
			f.t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT order_id) FROM sales_db.orders_clean`).Scan(&rows, &distinct); err != nil {
		f.t.Fatal(err)
	}
	return rows, distinct
}

func TestCatalogStory(t *testing.T) {
	t.Parallel()
	eachBackend(t, testCatalogStory)
}

func testCatalogStory(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})
	writeFile(t, f.jobPath, []byte(catalogJobYAML(f.out.loc())))
	land := strings.TrimSuffix(f.in.loc(), "/") + "/"
	raw := catalog.Table{Database: "sales_db", Name: "orders_raw", Location: land, Format: "csv",
		Options: map[string]string{"header": "true"},
		Columns: []catalog.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "customer_id", Type: "VARCHAR"},
			{Name: "product", Type: "VARCHAR"}, {Name: "amount", Type: "BIGINT"}},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}}}
	f.applyCatalog(catalog.Changes{Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: raw}}})
	day := func(d string) catalog.Changes {
		return catalog.Changes{Partitions: []catalog.Partition{{Database: "sales_db", Table: "orders_raw",
			Values: []string{d}, Location: land + "day=" + d + "/"}}}
	}
	// An old day, registered, that the predicate prunes, and a folder
	// nobody registered.
	f.addCSV("day=2026-02-28/orders.csv", 7)
	f.applyCatalog(day("2026-02-28"))
	f.addCSV("day=2026-03-09/orders.csv", 5)

	var all []record
	var runs []runSummary
	for i, d := range []string{"2026-03-01", "2026-03-02", "2026-03-03"} {
		// The first day sells widgets only: the rewind to it leaves the
		// other products' partitions without files.
		var recs []record
		for j := 1; j <= 2; j++ {
			part := f.gen.records(10 + i)
			for k := range part {
				if i == 0 {
					part[k].Product = "widget"
				}
			}
			f.putCSV(fmt.Sprintf("day=%s/orders-%02d.csv", d, j), part)
			recs = append(recs, part...)
		}
		f.applyCatalog(day(d))
		all = append(all, recs...)
		s := f.mustRun()
		runs = append(runs, s)
		if got := s.Sources["orders_source"].Files; got != 2 {
			t.Errorf("day %s: the run read %d files, want the day's 2", d, got)
		}
	}
	assertSink(t, f.outDir(), f.sink, all)

	// Nothing new: a run reads nothing (bookmarks per ctx, as for paths).
	if s := f.mustRun(); s.Sources["orders_source"].Files != 0 {
		t.Errorf("a fourth run read %d files, want 0", s.Sources["orders_source"].Files)
	}

	clean := f.catalogShow("sales_db.orders_clean")
	if clean.Format != "parquet" || clean.Version != 1 || strings.TrimSuffix(clean.Location, "/") != strings.TrimSuffix(f.out.loc(), "/") {
		t.Errorf("orders_clean: format %s version %d location %s; want parquet, 1, %s", clean.Format, clean.Version, clean.Location, f.out.loc())
	}
	if got := fmt.Sprint(clean.Columns, clean.PartitionKeys); got != "[{order_id BIGINT} {customer_id VARCHAR} {amount BIGINT}] [{product VARCHAR}]" {
		t.Errorf("orders_clean columns and keys = %s", got)
	}
	if got, want := clean.products(), f.sinkProducts(); !slices.Equal(got, want) || len(want) != len(products) {
		t.Errorf("orders_clean partitions %v, want the sink's product folders %v", got, want)
	}
	for _, p := range clean.Partitions {
		if want := strings.TrimSuffix(f.out.loc(), "/") + "/product=" + p.Values["product"] + "/"; p.Location != want {
			t.Errorf("partition %v at %s, want %s", p.Values, p.Location, want)
		}
	}
	if n, d := f.ddlCount(); n != int64(len(all)) || d != n {
		t.Errorf("DuckDB DDL: %d rows, %d distinct order ids; want each of the %d records once", n, d, len(all))
	}

	// Rewind to the first day with --purge-output: the partitions only the
	// later runs wrote are dropped, the others stay.
	first := readSinkRun(t, f.outDir(), f.sink, runs[0].RunID)
	f.reset("--to-run", runs[0].RunID, "--purge-output")
	assertSink(t, f.outDir(), f.sink, first)
	after := f.catalogShow("sales_db.orders_clean")
	if got, want := after.products(), f.sinkProducts(); !slices.Equal(got, want) || !slices.Equal(want, []string{"widget"}) {
		t.Errorf("after the rewind: catalog partitions %v, sink product folders %v; want the same", got, want)
	}
	if n, d := f.ddlCount(); n != int64(len(first)) || d != n {
		t.Errorf("DuckDB DDL after the rewind: %d rows, %d distinct; want the first run's %d once", n, d, len(first))
	}
	// Reprocessing brings back every record once, and every partition.
	s := f.mustRun()
	if got := s.Sources["orders_source"].Files; got != 4 {
		t.Errorf("the run after the rewind read %d files, want the 4 of days 2 and 3", got)
	}
	assertSink(t, f.outDir(), f.sink, all)
	if got, want := f.catalogShow("sales_db.orders_clean").products(), f.sinkProducts(); !slices.Equal(got, want) {
		t.Errorf("after reprocessing: catalog partitions %v, sink product folders %v", got, want)
	}
	if n, d := f.ddlCount(); n != int64(len(all)) || d != n {
		t.Errorf("DuckDB DDL after reprocessing: %d rows, %d distinct; want %d once", n, d, len(all))
	}
}
