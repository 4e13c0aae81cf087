package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// partitionedOrders adds a timestamp and a date to the sales rows, for
// the time transforms.
const partitionedOrders = `SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount,
      TIMESTAMP '2026-01-01 00:00:00' + to_hours(CAST(order_id * 7 % 200 AS BIGINT)) AS ts,
      CASE WHEN order_id % 9 = 0 THEN NULL
        ELSE CAST(DATE '2025-11-01' + CAST(order_id * 11 % 500 AS INTEGER) AS DATE) END AS d
    FROM orders_source`

// icebergPartitionedFixture is icebergFixture (SQLite state) whose job
// writes partitionedOrders with partition_by.
func icebergPartitionedFixture(t *testing.T, mode string, partitionBy ...string) (*fixture, string) {
	t.Helper()
	f, state := icebergFixture(t, icebergStores()[0], mode)
	setPartitionBy(t, f, partitionBy...)
	return f, state
}

// setPartitionBy rewrites the fixture's job with partitionedOrders and
// partition_by.
func setPartitionBy(t *testing.T, f *fixture, partitionBy ...string) {
	t.Helper()
	b, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	job := strings.Replace(string(b), cleanOrders, partitionedOrders, 1)
	if !strings.HasSuffix(job, "\n") {
		job += "\n"
	}
	job += fmt.Sprintf("    partition_by: [%s]\n", strings.Join(partitionBy, ", "))
	writeFile(t, f.jobPath, []byte(job))
}

// pyicebergPartitions checks a partitioned table as a reader would: each
// data file's partition values against the values pyiceberg's transforms
// compute from the file's rows, and scans with row filters (argv[3], a
// JSON list of [column, value]) that prune by the partition values.
const pyicebergPartitions = `
import datetime, json, sys
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.utils.datetime import date_to_days, datetime_to_micros
cat = SqlCatalog("tidemark", uri=sys.argv[1])
t = cat.load_table(sys.argv[2])
spec, schema = t.spec(), t.schema()
def norm(v):
    if isinstance(v, datetime.datetime):
        return datetime_to_micros(v)
    if isinstance(v, datetime.date):
        return date_to_days(v)
    return v
bad, files, rows = [], 0, 0
for task in t.scan().plan_files():
    files += 1
    df = task.file
    path = df.file_path.removeprefix("file://")
    recs = pq.read_table(path).to_pylist()
    rows += len(recs)
    for pos, f in enumerate(spec.fields):
        src = schema.find_field(f.source_id)
        fn = f.transform.transform(src.field_type)
        got = norm(df.partition[pos])
        for r in recs:
            v = r[src.name]
            want = None if v is None else fn(norm(v))
            if want != got:
                bad.append("%s: partition field %s is %r, but row %s has %s=%r, whose %s is %r" % (
                    path, f.name, got, r["order_id"], src.name, v, f.transform, want))
                break
probes = []
for col, val in json.loads(sys.argv[3]):
    scan = t.scan(row_filter=EqualTo(col, val), selected_fields=("order_id",))
    probes.append({"files": len(list(scan.plan_files())),
                   "ids": sorted(scan.to_arrow().column("order_id").to_pylist())})
print(json.dumps({"spec": [str(f.transform) + "(" + schema.find_field(f.source_id).name + ")" for f in spec.fields],
                  "files": files, "rows": rows, "bad": bad, "probes": probes}))
`

// partitionView is what pyicebergPartitions prints.
type partitionView struct {
	Spec   []string `json:"spec"`
	Files  int      `json:"files"`
	Rows   int      `json:"rows"`
	Bad    []string `json:"bad"`
	Probes []struct {
		Files int     `json:"files"`
		IDs   []int64 `json:"ids"`
	} `json:"probes"`
}

// probe is a row filter column = value.
type probe struct {
	col string
	val any
}

func readPartitions(t *testing.T, state string, probes []probe) partitionView {
	t.Helper()
	ps := [][2]any{}
	for _, p := range probes {
		ps = append(ps, [2]any{p.col, p.val})
	}
	arg, _ := json.Marshal(ps)
	out := pyiceberg(t, "reading the partitions of sales.orders", pyicebergPartitions, state, nil, string(arg))
	var v partitionView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("pyiceberg's output %q: %v", out, err)
	}
	return v
}

// idsWhere are the order ids of the records keep is true for, sorted.
func idsWhere(recs []record, keep func(record) bool) []int64 {
	ids := []int64{}
	for _, r := range recs {
		if keep(r) {
			ids = append(ids, r.OrderID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestIcebergPartitionBy: partition_by with identity and every transform
// makes the new table's spec; every data file holds one partition tuple,
// the one pyiceberg's transforms compute from each of its rows (a wrong
// bucket would make readers prune the file that has the row); scans with
// a row filter on a partition source column read exactly the matching
// rows, from fewer files than the table has.
func TestIcebergPartitionBy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		by       []string
		wantSpec []string
	}{
		{"identity-day-bucket", []string{"product", "day(ts)", "bucket(4, order_id)"},
			[]string{"identity(product)", "day(ts)", "bucket[4](order_id)"}},
		{"month-year-hour-truncate", []string{"month(ts)", "year(d)", "truncate(2, customer_id)", "bucket(3, customer_id)"},
			[]string{"month(ts)", "year(d)", "truncate[2](customer_id)", "bucket[3](customer_id)"}},
		{"hour", []string{"hour(ts)"}, []string{"hour(ts)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, state := icebergPartitionedFixture(t, "append", c.by...)
			monday := f.addCSVs("monday", 2, 30)
			f.mustRun()
			tuesday := f.addCSVs("tuesday", 1, 30)
			f.mustRun()
			all := concat(monday, tuesday)
			assertIcebergIDs(t, "after two runs", readIceberg(t, state, f.env), all)
			probes := []probe{{"order_id", all[7].OrderID}, {"order_id", all[40].OrderID}, {"product", "widget"},
				{"customer_id", all[3].CustomerID}}
			v := readPartitions(t, state, probes)
			if !slices.Equal(v.Spec, c.wantSpec) {
				t.Errorf("the table's spec is %q, want %q", v.Spec, c.wantSpec)
			}
			for _, b := range v.Bad {
				t.Errorf("a data file's partition tuple does not match its rows: %s", b)
			}
			if v.Rows != len(all) || v.Files < 2 {
				t.Errorf("the table has %d rows in %d data files, want %d rows in several files", v.Rows, v.Files, len(all))
			}
			for i, p := range probes {
				want := idsWhere(all, func(r record) bool {
					switch p.col {
					case "order_id":
						return r.OrderID == p.val
					case "product":
						return r.Product == p.val
					}
					return r.CustomerID == p.val
				})
				if got := v.Probes[i]; !slices.Equal(got.IDs, want) {
					t.Errorf("scan with %s = %v: order ids %v, want %v", p.col, p.val, got.IDs, want)
				}
			}
			if c.name == "identity-day-bucket" {
				for i := range 3 {
					if got := v.Probes[i].Files; got >= v.Files {
						t.Errorf("scan with %s = %v planned %d of the table's %d files, want the partitions pruned",
							probes[i].col, probes[i].val, got, v.Files)
					}
				}
			}
		})
	}
}

// TestIcebergOverwritePartitions: mode overwrite_partitions replaces the
// data files of the partitions a run writes, in one snapshot, and keeps
// the others (partitions of strings, dates, integers and nulls); a run
// that read nothing replaces nothing.
func TestIcebergOverwritePartitions(t *testing.T) {
	t.Parallel()
	tsAt := func(r record) time.Time {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.OrderID*7%200) * time.Hour)
	}
	for _, c := range []struct {
		name string
		by   []string
		key  func(record) string
	}{
		{"identity", []string{"product"}, func(r record) string { return r.Product }},
		{"product-day", []string{"product", "day(ts)"}, func(r record) string {
			return r.Product + "/" + tsAt(r).Format("2006-01-02")
		}},
		{"year-of-date-with-nulls", []string{"year(d)"}, func(r record) string {
			if r.OrderID%9 == 0 {
				return "null"
			}
			return fmt.Sprint(time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(r.OrderID*11%500)).Year())
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, state := icebergPartitionedFixture(t, "overwrite_partitions", c.by...)
			monday := f.addCSVs("monday", 2, 30)
			mon := f.mustRun()
			// Tuesday's rows fall in some of Monday's partitions only.
			var tuesday []record
			for _, r := range f.gen.records(60) {
				if r.Product == "widget" || r.Product == "gadget" {
					tuesday = append(tuesday, r)
				}
			}
			if c.name == "year-of-date-with-nulls" {
				tuesday = tuesday[:3] // ids 1060..: 2026 and a null (1062 = 9 * 118)
			}
			f.putCSV("tuesday/widgets.csv", tuesday)
			tue := f.mustRun()
			touched := map[string]bool{}
			for _, r := range tuesday {
				touched[c.key(r)] = true
			}
			var want []record
			for _, r := range monday {
				if !touched[c.key(r)] {
					want = append(want, r)
				}
			}
			if len(want) == 0 || len(want) == len(monday) {
				t.Fatalf("the test's data: Tuesday replaces %d of Monday's %d rows, want some but not all",
					len(monday)-len(want), len(monday))
			}
			want = concat(want, tuesday)
			v := readIceberg(t, state, f.env)
			assertIcebergIDs(t, "after Tuesday replaced the partitions it writes", v, want)
			if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID, tue.RunID}) {
				t.Errorf("snapshots name runs %q, want [%s %s], one snapshot per run", got, mon.RunID, tue.RunID)
			}
			if len(v.Snapshots) == 2 && v.Snapshots[1].Operation != "overwrite" {
				t.Errorf("Tuesday's snapshot is a %s, want an overwrite", v.Snapshots[1].Operation)
			}
			assertFiles(t, "Wednesday (nothing new)", f.mustRun(), 0)
			assertIcebergIDs(t, "after Wednesday", readIceberg(t, state, f.env), want)
			if p := readPartitions(t, state, nil); len(p.Bad) > 0 {
				t.Errorf("partition tuples that do not match their rows: %q", p.Bad)
			}
		})
	}
}

// TestIcebergSpecMismatch: a job whose partition_by differs from the
// existing table's spec fails before its commit, naming both specs, and
// leaves the table and the bookmark as they were.
func TestIcebergSpecMismatch(t *testing.T) {
	t.Parallel()
	f, state := icebergPartitionedFixture(t, "append", "product")
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	good, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	tuesday := f.addCSVs("tuesday", 1, 10)
	for _, c := range []struct {
		by   string
		want []string
	}{
		{"    partition_by: [bucket(8, order_id)]\n", []string{"sales.orders", "partitioned by [product]", "bucket(8, order_id)"}},
		{"", []string{"sales.orders", "partitioned by [product]", "unpartitioned"}},
	} {
		job := strings.Replace(string(good), "    partition_by: [product]\n", c.by, 1)
		writeFile(t, f.jobPath, []byte(job))
		_, r := f.runExpect(1)
		assertMentions(t, r, c.want...)
		assertIcebergIDs(t, "after the refused run", readIceberg(t, state, f.env), monday)
	}
	writeFile(t, f.jobPath, good)
	assertFiles(t, "the run with the job file put back", f.mustRun(), 1)
	assertIcebergIDs(t, "at the end", readIceberg(t, state, f.env), concat(monday, tuesday))
}

// TestIcebergPartitionByBadColumn: partition_by over a column the output
// lacks, or a transform the column's type does not take, fails the run
// before its commit naming the column, and creates no table.
func TestIcebergPartitionByBadColumn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		by   string
		want []string
	}{
		{"day(shipped)", []string{"partition_by", `"shipped"`}},
		{"day(product)", []string{"partition_by", "day", `"product"`, "string"}},
	} {
		t.Run(c.by, func(t *testing.T) {
			t.Parallel()
			f, state := icebergPartitionedFixture(t, "append", c.by)
			f.addCSVs("monday", 1, 10)
			_, r := f.runExpect(1)
			assertMentions(t, r, c.want...)
			if v := readIceberg(t, state, f.env); v.Exists {
				t.Errorf("the refused run created the table (%d rows)", len(v.IDs))
			}
		})
	}
}

// TestIcebergMergePartitioned: mode merge on a table partitioned by
// bucket: the rows a run replaces are deleted from the files of their
// partitions, the rewritten files keep one correct partition tuple each,
// and every order is in the table once with its latest amount.
func TestIcebergMergePartitioned(t *testing.T) {
	t.Parallel()
	f, state := icebergPartitionedFixture(t, "merge", "bucket(4, order_id)", "product")
	monday := f.addCSVs("monday", 1, 20)
	f.mustRun()
	var tuesday []record
	for _, r := range monday[:5] {
		r.Amount += 1000
		tuesday = append(tuesday, r)
	}
	tuesday = append(tuesday, f.gen.records(3)...)
	f.putCSV("tuesday/update.csv", tuesday)
	f.mustRun()
	want := map[int64]int64{}
	for _, r := range concat(monday, tuesday) {
		want[r.OrderID] = r.Amount
	}
	v := readIceberg(t, state, f.env)
	got := map[int64]int64{}
	for _, r := range v.Rows {
		if _, dup := got[r[0]]; dup {
			t.Errorf("after the merge: order %d is in the table twice", r[0])
		}
		got[r[0]] = r[1]
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the merge: rows (order: amount) %v, want %v", got, want)
	}
	if p := readPartitions(t, state, nil); len(p.Bad) > 0 {
		t.Errorf("partition tuples that do not match their rows: %q", p.Bad)
	}
}
