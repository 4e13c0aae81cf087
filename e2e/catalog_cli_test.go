package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
)

// TestCatalogCommands: every catalog verb, human and --json, with the
// errors that name what is there; a sink whose output gains a column
// writes a new table version that diff shows; a table that moved is a
// change of the source reading it, one that only gained a column is not.
func TestCatalogCommands(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	state := filepath.Join(f.dir, ".tidemark", "state.db")
	cat := func(code int, args ...string) result {
		t.Helper()
		r := f.tidemark(nil, append(append([]string{"catalog"}, args...), "--state", state)...)
		if r.code != code {
			t.Fatalf("catalog %s: exit %d, want %d\n%v", strings.Join(args, " "), r.code, code, r)
		}
		return r
	}

	// No state store yet: read-only commands create none.
	r := cat(2, "databases")
	if !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("catalog databases without a state: %s", r.stderr)
	}

	writeFile(t, f.jobPath, []byte(catalogJobYAML(f.out.loc())))
	land := f.in.loc() + "/"
	raw := catalog.Table{Database: "sales_db", Name: "orders_raw", Location: land, Format: "csv",
		Options: map[string]string{"header": "true"},
		Columns: []catalog.Column{{Name: "order_id", Type: "BIGINT"}, {Name: "customer_id", Type: "VARCHAR"},
			{Name: "product", Type: "VARCHAR"}, {Name: "amount", Type: "BIGINT"}},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}}}
	f.applyCatalog(catalog.Changes{Databases: []catalog.Database{{Name: "sales_db"}}, Tables: []catalog.TableChange{{Table: raw}},
		Partitions: []catalog.Partition{{Database: "sales_db", Table: "orders_raw", Values: []string{"2026-03-01"}, Location: land + "day=2026-03-01/"}}})
	f.addCSV("day=2026-03-01/orders.csv", 10)
	f.mustRun()

	// Another job reads the sink's Parquet table by name, partition key
	// included, with the table's columns on its first run (before the table has a second
	// version: files without its new column would need schema_evolution).
	out2 := filepath.Join(f.dir, "report")
	job2 := filepath.Join(f.dir, "report.yaml")
	writeFile(t, job2, []byte(`job: report
sources:
  - ctx: clean
    catalog: sales_db.orders_clean
    push_down_predicate: "product IN ('widget', 'gadget')"
transforms:
  totals: |
    SELECT product, count(*) AS orders FROM clean GROUP BY product
sinks:
  - ctx: totals
    path: "`+out2+`"
    format: csv
`))
	r = f.tidemark(nil, "run", job2, "--json")
	if r.code != 0 {
		t.Fatalf("run of the report job: exit %d\n%v", r.code, r)
	}
	var want int64
	for _, rec := range readSink(t, f.outDir(), f.sink) {
		if rec.Product == "widget" || rec.Product == "gadget" {
			want++
		}
	}
	var got int64
	if err := duck.QueryRow(`SELECT sum(orders) FROM read_csv('` + out2 + `/*.csv')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != want || want == 0 {
		t.Errorf("report over widget and gadget: %d orders, want %d", got, want)
	}

	// A second version of the sink's table: the transform adds a column.
	job := strings.Replace(catalogJobYAML(f.out.loc()), cleanOrders, strings.Replace(cleanOrders, " FROM", ", 'web' AS channel FROM", 1), 1)
	writeFile(t, f.jobPath, []byte(job))
	f.addCSV("day=2026-03-02/orders.csv", 10)
	f.applyCatalog(catalog.Changes{Partitions: []catalog.Partition{{Database: "sales_db", Table: "orders_raw", Values: []string{"2026-03-02"}, Location: land + "day=2026-03-02/"}}})
	f.mustRun()

	// Over the table's two versions: the files of the first lack channel,
	// which schema_evolution gives them as NULL.
	evolved := filepath.Join(f.dir, "evolved")
	job3 := filepath.Join(f.dir, "evolved.yaml")
	writeFile(t, job3, []byte(`job: evolved
sources:
  - ctx: clean
    catalog: sales_db.orders_clean
    schema_evolution: none
transforms:
  totals: |
    SELECT count(*) AS orders, count(channel) AS with_channel FROM clean
sinks:
  - ctx: totals
    path: "`+evolved+`"
    format: csv
`))
	if r := f.tidemark(nil, "run", job3, "--json"); r.code != 0 {
		t.Fatalf("run of the job over both versions: exit %d\n%v", r.code, r)
	}
	var orders, withChannel int64
	if err := duck.QueryRow(`SELECT sum(orders), sum(with_channel) FROM read_csv('`+evolved+`/*.csv')`).Scan(&orders, &withChannel); err != nil {
		t.Fatal(err)
	}
	if orders != 20 || withChannel != 10 {
		t.Errorf("over both versions: %d orders, %d with a channel; want 20 and the second run's 10", orders, withChannel)
	}

	// databases and tables.
	var dbs []catalog.Database
	if err := json.Unmarshal([]byte(cat(0, "databases", "--json").stdout), &dbs); err != nil || len(dbs) != 1 || dbs[0].Name != "sales_db" {
		t.Errorf("databases --json = %+v, %v", dbs, err)
	}
	if out := cat(0, "databases").stdout; !strings.Contains(out, "sales_db") || !strings.Contains(out, "2") {
		t.Errorf("databases: %s", out)
	}
	var tables []struct {
		Table      string `json:"table"`
		Version    int64  `json:"version"`
		Partitions int    `json:"partition_count"`
	}
	if err := json.Unmarshal([]byte(cat(0, "tables", "sales_db", "--json").stdout), &tables); err != nil || len(tables) != 2 ||
		tables[0].Table != "orders_clean" || tables[0].Version != 2 || tables[1].Table != "orders_raw" || tables[1].Partitions != 2 {
		t.Errorf("tables --json = %+v, %v", tables, err)
	}
	if r := cat(2, "tables", "web_db"); !strings.Contains(r.stderr, "database web_db is not in the catalog (databases: sales_db)") {
		t.Errorf("tables of an unknown database: %s", r.stderr)
	}

	// show, --version, and the errors.
	v1 := decodeOne[catalogShow](t, cat(0, "show", "sales_db.orders_clean", "--version", "1", "--json"))
	v2 := decodeOne[catalogShow](t, cat(0, "show", "sales_db.orders_clean", "--json"))
	if v1.Version != 1 || len(v1.Columns) != 3 || v2.Version != 2 || len(v2.Columns) != 4 || v2.Columns[3] != (catalog.Column{Name: "channel", Type: "VARCHAR"}) {
		t.Errorf("show: version 1 %+v; version 2 %+v", v1.Columns, v2.Columns)
	}
	if len(v2.Versions) != 2 || !strings.Contains(v2.Versions[0].Summary, "+ column channel VARCHAR") {
		t.Errorf("show: versions %+v", v2.Versions)
	}
	human := cat(0, "show", "sales_db.orders_clean").stdout
	for _, want := range []string{"version 2 of 2", "channel", "(partition key)", "product=", f.out.loc()} {
		if !strings.Contains(human, want) {
			t.Errorf("show: no %q in\n%s", want, human)
		}
	}
	if r := cat(2, "show", "sales_db.orders"); !strings.Contains(r.stderr, "table sales_db.orders is not in the catalog (tables of sales_db: orders_clean, orders_raw)") {
		t.Errorf("show of an unknown table: %s", r.stderr)
	}
	if r := cat(2, "show", "sales_db.orders_clean", "--version", "7"); !strings.Contains(r.stderr, "has no version 7 (it has versions 1 to 2)") {
		t.Errorf("show of an unknown version: %s", r.stderr)
	}
	if r := cat(2, "show", "orders"); !strings.Contains(r.stderr, "want DATABASE.TABLE") {
		t.Errorf("show of a bare name: %s", r.stderr)
	}

	// diff.
	var diff struct {
		Changes []catalog.Difference `json:"changes"`
	}
	if err := json.Unmarshal([]byte(cat(0, "diff", "sales_db.orders_clean", "1", "2", "--json").stdout), &diff); err != nil ||
		len(diff.Changes) != 1 || diff.Changes[0] != (catalog.Difference{What: "column added", Name: "channel", To: "VARCHAR"}) {
		t.Errorf("diff --json = %+v, %v", diff, err)
	}
	if out := cat(0, "diff", "sales_db.orders_clean", "1", "2").stdout; !strings.Contains(out, "+ column channel VARCHAR") {
		t.Errorf("diff: %s", out)
	}
	cat(2, "diff", "sales_db.orders_clean", "1", "x")

	// ddl in each dialect.
	for dialect, want := range map[string]string{
		"duckdb": "CREATE OR REPLACE VIEW \"sales_db\".\"orders_clean\"",
		"spark":  "PARTITIONED BY (`product`)",
		"trino":  "partitioned_by = ARRAY['product']",
	} {
		if out := cat(0, "ddl", "sales_db.orders_clean", "--dialect", dialect).stdout; !strings.Contains(out, want) {
			t.Errorf("ddl --dialect %s: no %q in\n%s", dialect, want, out)
		}
	}
	if r := cat(2, "ddl", "sales_db.orders_clean", "--dialect", "hive"); !strings.Contains(r.stderr, "duckdb, spark, trino") {
		t.Errorf("ddl with an unknown dialect: %s", r.stderr)
	}
	cat(2, "ddl", "sales_db.orders_clean")

	// A new version of the raw table that adds a column is not a change of
	// the source; one that moves it is.
	raw2 := raw
	raw2.Columns = append(append([]catalog.Column{}, raw.Columns...), catalog.Column{Name: "note", Type: "VARCHAR"})
	f.applyCatalog(catalog.Changes{Tables: []catalog.TableChange{{Table: raw2, Base: 1}}})
	f.mustRun()
	raw3 := raw2
	raw3.Location = f.dir + "/elsewhere/"
	f.applyCatalog(catalog.Changes{Tables: []catalog.TableChange{{Table: raw3, Base: 2}}})
	if _, r := f.runExpect(2); !strings.Contains(r.stderr, "source orders_source changed since its bookmark was written") {
		t.Errorf("a run after the table moved: %s", r.stderr)
	}

	// drop.
	var dropped struct {
		Version int64 `json:"dropped_version"`
	}
	if err := json.Unmarshal([]byte(cat(0, "drop", "sales_db.orders_raw", "--json").stdout), &dropped); err != nil || dropped.Version != 3 {
		t.Errorf("drop --json = %+v, %v", dropped, err)
	}
	// Exit 2, naming what is there; no hint to read --help, as the command was right.
	if r := cat(2, "show", "sales_db.orders_raw"); !strings.Contains(r.stderr, "(tables of sales_db: orders_clean)") || strings.Contains(r.stderr, "--help") {
		t.Errorf("show after drop: %s", r.stderr)
	}
	// The job file names a table that is not there: exit 2, no run.
	if _, r := f.runExpect(2); !strings.Contains(r.stderr, "table sales_db.orders_raw is not in the catalog") {
		t.Errorf("a run reading a dropped table: %s", r.stderr)
	}
}
