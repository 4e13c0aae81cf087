package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/fault"
)

// envPyiceberg names the python of a venv with pyiceberg 0.12 (and its
// sql-sqlite, sql-postgres and pyarrow extras), which scripts/test.sh
// makes.
const envPyiceberg = "TIDEMARK_TEST_PYICEBERG"

// icebergStores are the state stores that hold tidemark's own Iceberg
// catalog.
func icebergStores() []stateStore {
	var out []stateStore
	for _, ss := range stateStores {
		if ss.name == "sqlite" || ss.name == "postgres" {
			out = append(out, ss)
		}
	}
	return out
}

// icebergJob is the sales job writing into the Iceberg table sales.orders
// at output, in mode.
func icebergJob(state, landing, output, mode string) string {
	keys := ""
	if mode == "merge" {
		keys = "    merge_keys: [order_id]\n"
	}
	return fmt.Sprintf(`job: sales
state: %q
sources:
  - ctx: orders_source
    path: %q
    format: csv
    options: {header: true}
transforms:
  clean_orders: |
    %s
sinks:
  - ctx: orders_sink
    iceberg: {table: sales.orders}
    path: %q
    mode: %s
%s`, state, landing, cleanOrders, output, mode, keys)
}

// icebergFixture is a sales job on local folders with its state in a new
// store of ss, writing the Iceberg table sales.orders in mode.
func icebergFixture(t *testing.T, ss stateStore, mode string) (*fixture, string) {
	t.Helper()
	return icebergFixtureOn(t, local, ss, mode)
}

// icebergFixtureOn is icebergFixture with the engine of be (local:
// DuckDB; onSpark: the shared Spark Connect server).
func icebergFixtureOn(t *testing.T, be backend, ss stateStore, mode string) (*fixture, string) {
	t.Helper()
	f, state := stateOn(t, local, ss, jobOpts{})
	job := icebergJob(state, f.in.loc(), f.outDir(), mode)
	if be == onSpark {
		job = strings.Replace(job, "\nsources:", "\n"+sparkEngine(t)+"\nsources:", 1)
	}
	writeFile(t, f.jobPath, []byte(job))
	return f, state
}

// icebergSnapshot is one snapshot as pyiceberg reads it.
type icebergSnapshot struct {
	ID        int64             `json:"id"`
	Operation string            `json:"operation"`
	Summary   map[string]string `json:"summary"`
}

// icebergView is the table as pyiceberg reads it through the state's SQL
// catalog: the order ids of its rows, and the current branch's snapshots,
// oldest first.
type icebergView struct {
	Exists bool       `json:"exists"`
	IDs    []int64    `json:"ids"`
	Rows   [][2]int64 `json:"rows"` // order id, amount
	// NameMapping: the table has schema.name-mapping.default, by which
	// readers map the columns of files without Parquet field ids.
	NameMapping bool              `json:"name_mapping"`
	Snapshots   []icebergSnapshot `json:"snapshots"`
	// Columns are the current schema's columns and their Iceberg types.
	Columns map[string]string `json:"columns"`
	// Notes are the values of a column note by order id (null: nil), when
	// the table has one.
	Notes map[string]*string `json:"notes"`
}

// pyicebergRead is the script that reads the table: argv is the catalog's
// SQLAlchemy URI (or a REST catalog's http:// URI, its bearer token in
// ICEBERG_TOKEN when set) and the table's name.
const pyicebergRead = `
import json, os, sys
from pyiceberg.exceptions import NoSuchTableError
if sys.argv[1].startswith("http"):
    from pyiceberg.catalog.rest import RestCatalog
    props = {"uri": sys.argv[1]}
    if os.environ.get("ICEBERG_TOKEN"):
        props["token"] = os.environ["ICEBERG_TOKEN"]
    cat = RestCatalog("rest", **props)
else:
    from pyiceberg.catalog.sql import SqlCatalog
    cat = SqlCatalog("tidemark", uri=sys.argv[1])
try:
    t = cat.load_table(sys.argv[2])
except NoSuchTableError:
    print(json.dumps({"exists": False, "ids": [], "snapshots": []}))
    sys.exit(0)
tab = t.scan(selected_fields=("order_id", "amount")).to_arrow()
ids = tab.column("order_id").to_pylist()
rows = sorted(zip(ids, tab.column("amount").to_pylist()))
snaps = []
s = t.current_snapshot()
while s is not None:
    summ = s.summary
    snaps.append({"id": s.snapshot_id, "operation": str(summ.operation.value),
                  "summary": {k: str(v) for k, v in summ.additional_properties.items()}})
    s = t.snapshot_by_id(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
snaps.reverse()
cols = {f.name: str(f.field_type) for f in t.schema().fields}
notes = {}
if "note" in cols:
    nt = t.scan(selected_fields=("order_id", "note")).to_arrow()
    notes = {str(k): v for k, v in zip(nt.column("order_id").to_pylist(), nt.column("note").to_pylist())}
print(json.dumps({"exists": True, "ids": sorted(ids), "rows": rows, "snapshots": snaps,
                  "name_mapping": "schema.name-mapping.default" in t.properties, "columns": cols, "notes": notes}))
`

// readIceberg reads the Iceberg table sales.orders of the job whose state
// is at state with pyiceberg.
func readIceberg(t *testing.T, state string, env []string) icebergView {
	t.Helper()
	out := pyiceberg(t, "reading sales.orders", pyicebergRead, state, env)
	var v icebergView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("pyiceberg's output %q: %v", out, err)
	}
	return v
}

// pyiceberg runs script with the Python that has pyiceberg (envPyiceberg,
// set by scripts/test.sh), its argv the SQL catalog in the state at state
// (SQLite or PostgreSQL), the table sales.orders and args, with env added
// to the environment. It returns what the script printed; a failure fails the
// test, saying what it was doing, with the script's stderr.
func pyiceberg(t *testing.T, what, script, state string, env []string, args ...string) []byte {
	t.Helper()
	py := os.Getenv(envPyiceberg)
	if py == "" {
		t.Fatalf("%s is not set: run scripts/test.sh, which makes a venv with pyiceberg", envPyiceberg)
	}
	uri := "sqlite:///" + state
	switch {
	case strings.HasPrefix(state, "http://"):
		uri = state
	case strings.HasPrefix(state, "postgres://"):
		u, err := url.Parse(state)
		if err != nil {
			t.Fatal(err)
		}
		schema := u.Query().Get("schema")
		u.Scheme, u.RawQuery = "postgresql+psycopg2", "options="+url.QueryEscape("-csearch_path="+schema)
		uri = u.String()
	}
	path := filepath.Join(t.TempDir(), "script.py")
	writeFile(t, path, []byte(script))
	cmd := exec.CommandContext(t.Context(), py, append([]string{path, uri, "sales.orders"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("pyiceberg %s: %v\n%s", what, err, stderr)
	}
	return out
}

// assertIcebergIDs fails unless the table holds exactly want's order ids.
func assertIcebergIDs(t *testing.T, what string, v icebergView, want []record) {
	t.Helper()
	ids := orderIDs(want)
	slices.Sort(ids)
	if !slices.Equal(v.IDs, ids) {
		t.Errorf("%s: pyiceberg reads %d rows %v, want %d rows %v", what, len(v.IDs), firstFewIDs(v.IDs), len(ids), firstFewIDs(ids))
	}
}

func firstFewIDs(ids []int64) []int64 {
	if len(ids) > 8 {
		return ids[:8]
	}
	return ids
}

// snapshotRuns are the run ids the snapshots name, oldest first.
func snapshotRuns(v icebergView) []string {
	var out []string
	for _, s := range v.Snapshots {
		out = append(out, s.Summary["tidemark.run-id"])
	}
	return out
}

// TestIcebergThreeDays: the seed's three days into an Iceberg table, with
// the state (and the table's catalog) in SQLite and in PostgreSQL, in
// modes append and overwrite. After each run pyiceberg reads exactly the
// rows the mode leaves (append: every day's; overwrite: the last run's
// that read anything), and each run that wrote made one snapshot naming
// the job, the sink and the run.
func TestIcebergThreeDays(t *testing.T) {
	t.Parallel()
	for _, ss := range icebergStores() {
		for _, mode := range []string{"append", "overwrite"} {
			t.Run(ss.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				testIcebergThreeDays(t, local, ss, mode)
			})
		}
	}
}

// TestSparkIcebergThreeDays is TestIcebergThreeDays with Spark staging the
// Parquet (the same staging contract as DuckDB's).
func TestSparkIcebergThreeDays(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"append", "overwrite"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testIcebergThreeDays(t, onSpark, icebergStores()[0], mode)
		})
	}
}

func testIcebergThreeDays(t *testing.T, be backend, ss stateStore, mode string) {
	f, state := icebergFixtureOn(t, be, ss, mode)
	env := f.env

	monday := f.addCSVs("monday", 10, 40)
	mon := f.mustRun()
	if got, want := mon.Sinks["orders_sink"].Rows, int64(len(monday)); got != want {
		t.Errorf("Monday: sinks.orders_sink.rows = %d, want %d", got, want)
	}
	v := readIceberg(t, state, env)
	assertIcebergIDs(t, "after Monday", v, monday)
	if !v.NameMapping {
		t.Errorf("after Monday: the table has no schema.name-mapping.default property (its files have no field ids)")
	}
	amounts := map[int64]int64{}
	for _, r := range monday {
		amounts[r.OrderID] = r.Amount
	}
	for _, r := range v.Rows {
		if amounts[r[0]] != r[1] {
			t.Errorf("after Monday: order %d has amount %d in the table, want %d", r[0], r[1], amounts[r[0]])
		}
	}
	if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID}) {
		t.Errorf("after Monday: snapshots name runs %q, want [%s]", got, mon.RunID)
	}
	if len(v.Snapshots) == 1 {
		s := v.Snapshots[0].Summary
		if s["tidemark.job"] != "sales" || s["tidemark.sink"] != "orders_sink" {
			t.Errorf("Monday's snapshot summary %v: want tidemark.job sales and tidemark.sink orders_sink", s)
		}
	}

	tuesday := f.addCSVs("tuesday", 5, 30)
	tue := f.mustRun()
	v = readIceberg(t, state, env)
	want := concat(monday, tuesday)
	if mode == "overwrite" {
		want = tuesday
	}
	assertIcebergIDs(t, "after Tuesday", v, want)
	if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID, tue.RunID}) {
		t.Errorf("after Tuesday: snapshots name runs %q, want [%s %s]", got, mon.RunID, tue.RunID)
	}

	wed := f.mustRun()
	assertFiles(t, "Wednesday", wed, 0)
	v = readIceberg(t, state, env)
	assertIcebergIDs(t, "after Wednesday (nothing new)", v, want)
	if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID, tue.RunID}) {
		t.Errorf("after Wednesday: snapshots name runs %q, want [%s %s] (a run that read nothing commits no snapshot)", got, mon.RunID, tue.RunID)
	}
	if left := stagedUnder(t, f.outDir()); len(left) > 0 {
		t.Errorf("staged files left after three runs: %v", left)
	}
}

// stagedUnder lists the files under an Iceberg sink's staging folder.
func stagedUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(filepath.Join(dir, "_tidemark", "staging"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// icebergCrashSteps are the steps around the two commits: the bookmark's
// (after-stage: before it; after-commit: after it) and the Iceberg
// table's (mid-publish: the files in place, not committed to the table;
// after-publish: committed to the table, the run not marked published).
var icebergCrashSteps = []string{fault.AfterStage, fault.AfterCommit, fault.MidPublish, fault.AfterPublish}

// TestIcebergCrash kills a run (SIGKILL) at each step around the bookmark
// and Iceberg commits, in modes append, overwrite and merge, then reruns the job
// from another host: pyiceberg reads every record exactly once (overwrite:
// exactly the killed run's input), no run has two snapshots, nothing is
// left staged, and the run after reads nothing.
func TestIcebergCrash(t *testing.T) {
	t.Parallel()
	for _, ss := range icebergStores() {
		for _, mode := range []string{"append", "overwrite", "merge"} {
			if mode == "merge" && ss.name != "sqlite" {
				continue // the commit protocol is the same on PostgreSQL
			}
			for _, step := range icebergCrashSteps {
				t.Run(ss.name+"/"+mode+"/"+step, func(t *testing.T) {
					t.Parallel()
					testIcebergCrash(t, ss, mode, step)
				})
			}
		}
	}
}

func testIcebergCrash(t *testing.T, ss stateStore, mode, step string) {
	f, state := icebergFixture(t, ss, mode)
	monday := f.addCSVs("monday", 2, 20)
	if _, r := f.run([]string{"TIDEMARK_HOST_ID=host-a"}); r.code != 0 {
		t.Fatalf("first run: got exit %d\n%v", r.code, r)
	}
	tuesday := f.addCSVs("tuesday", 3, 20)
	_, r := f.run([]string{"TIDEMARK_HOST_ID=host-a", "TIDEMARK_FAULT=" + step}, "--lease-ttl", "2s")
	if r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=%s: want it killed at that step\n%v", step, r)
	}
	f.killed = true
	var s runSummary
	deadline := time.Now().Add(time.Minute)
	for {
		s, r = f.run([]string{"TIDEMARK_HOST_ID=host-b"})
		if r.code == 0 {
			break
		}
		if r.code != 3 || time.Now().After(deadline) {
			t.Fatalf("rerun on host-b: got exit %d, want 3 until the lease expires, then 0\n%v", r.code, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if committedAt(step) {
		assertFiles(t, "rerun after a kill past the bookmark commit", s, 0)
	} else {
		assertFiles(t, "rerun after a kill before the bookmark commit", s, 3)
	}
	want := concat(monday, tuesday)
	if mode == "overwrite" {
		want = tuesday
	}
	v := readIceberg(t, state, f.env)
	assertIcebergIDs(t, "after the rerun", v, want)
	// A merge commits its delete and its append as two snapshots of one
	// catalog commit, both naming the run.
	runs := slices.Compact(snapshotRuns(v))
	if len(runs) != 2 || runs[0] == runs[1] || runs[0] == "" || runs[1] == "" {
		t.Errorf("after the rerun: snapshots name runs %q, want two runs, each in one commit", snapshotRuns(v))
	}
	if left := stagedUnder(t, f.outDir()); len(left) > 0 {
		t.Errorf("staged files left after the rerun: %v", left)
	}
	assertFiles(t, "the run after the rerun", f.mustRun(), 0)
	v = readIceberg(t, state, f.env)
	assertIcebergIDs(t, "at the end", v, want)
	if got := slices.Compact(snapshotRuns(v)); !slices.Equal(got, runs) {
		t.Errorf("at the end: snapshots name runs %q, want %q still", got, runs)
	}
}

// pyicebergAppend is the script of another writer: it appends rows with
// order ids argv[3:] to the table through the same catalog.
const pyicebergAppend = `
import sys
import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
cat = SqlCatalog("tidemark", uri=sys.argv[1])
t = cat.load_table(sys.argv[2])
rows = [{"order_id": int(i), "customer_id": "ext", "product": "external", "amount": 1} for i in sys.argv[3:]]
t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))
`

// appendIceberg has pyiceberg append records with ids to sales.orders.
func appendIceberg(t *testing.T, state string, ids ...int64) []record {
	t.Helper()
	var args []string
	var recs []record
	for _, id := range ids {
		args = append(args, fmt.Sprint(id))
		recs = append(recs, record{OrderID: id, CustomerID: "ext", Product: "external", Amount: 1})
	}
	pyiceberg(t, "appending to sales.orders", pyicebergAppend, state, nil, args...)
	return recs
}

// TestIcebergExternalWriterAndPurge: rows another writer (pyiceberg)
// appends between two runs stay in mode append and are replaced in mode
// overwrite, as documented; `bookmark reset --to-run --purge-output`
// removes what the undone run added, in a new snapshot naming it, and the
// next run adds it once again.
func TestIcebergExternalWriterAndPurge(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"append", "overwrite"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f, state := icebergFixture(t, icebergStores()[0], mode)
			monday := f.addCSVs("monday", 2, 10)
			mon := f.mustRun()
			external := appendIceberg(t, state, 900001, 900002, 900003)
			tuesday := f.addCSVs("tuesday", 2, 10)
			tue := f.mustRun()
			v := readIceberg(t, state, f.env)
			want := concat(monday, external, tuesday)
			if mode == "overwrite" {
				want = tuesday
			}
			assertIcebergIDs(t, "after Tuesday, the other writer's append between the runs", v, want)
			if got := snapshotRuns(v); !slices.Equal(got, []string{mon.RunID, "", tue.RunID}) {
				t.Errorf("snapshots name runs %q, want [%s (the other writer's) %s]", got, mon.RunID, tue.RunID)
			}
			if mode == "overwrite" {
				return
			}

			f.reset("--to-run", mon.RunID, "--purge-output")
			v = readIceberg(t, state, f.env)
			assertIcebergIDs(t, "after the reset to Monday's run with --purge-output", v, concat(monday, external))
			if n := len(v.Snapshots); n != 4 || v.Snapshots[n-1].Summary["tidemark.purged-run-id"] != tue.RunID {
				t.Errorf("after the purge: snapshots %+v, want a fourth naming tidemark.purged-run-id %s", v.Snapshots, tue.RunID)
			}
			again := f.mustRun()
			assertFiles(t, "the run after the reset", again, 2)
			v = readIceberg(t, state, f.env)
			assertIcebergIDs(t, "after the run after the reset", v, concat(monday, external, tuesday))
		})
	}
}

// TestIcebergMerge: mode merge replaces the rows whose order_id a run
// has (copy-on-write) and adds the new ones; a run whose output has one
// key twice fails before its commit, naming the key, and changes nothing.
func TestIcebergMerge(t *testing.T) {
	t.Parallel()
	f, state := icebergFixture(t, icebergStores()[0], "merge")
	monday := f.addCSVs("monday", 2, 10)
	mon := f.mustRun()
	// Tuesday: new amounts for three of Monday's orders, and two new orders.
	var tuesday []record
	for _, r := range monday[:3] {
		r.Amount += 1000
		tuesday = append(tuesday, r)
	}
	tuesday = append(tuesday, f.gen.records(2)...)
	f.putCSV("tuesday/update.csv", tuesday)
	tue := f.mustRun()
	want := map[int64]int64{}
	for _, r := range concat(monday, tuesday) {
		want[r.OrderID] = r.Amount // Tuesday's last
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
	runs := snapshotRuns(v)
	if len(runs) < 2 || runs[0] != mon.RunID || runs[len(runs)-1] != tue.RunID {
		t.Errorf("snapshots name runs %q, want Monday's %s first and Tuesday's %s last", runs, mon.RunID, tue.RunID)
	}

	dup := f.gen.records(1)
	f.putCSV("wednesday/dup.csv", concat(dup, dup))
	_, r := f.runExpect(1)
	assertMentions(t, r, "order_id", fmt.Sprint(dup[0].OrderID), "two rows")
	after := readIceberg(t, state, f.env)
	if !slices.Equal(after.IDs, v.IDs) || len(after.Snapshots) != len(v.Snapshots) {
		t.Errorf("a failed merge changed the table: %d rows, %d snapshots; want %d rows, %d snapshots",
			len(after.IDs), len(after.Snapshots), len(v.IDs), len(v.Snapshots))
	}
}

// TestIcebergSchemaChange: a run whose output has a column the table
// lacks adds it to the table (earlier rows read as null), a column whose
// type widens (int to long) is widened, a run whose files are narrower or
// lack a column fits the table as it is; a type Iceberg cannot promote to
// (long to string) fails before the commit, naming the column, and leaves
// the table and the bookmark as they were, and the job is not stuck.
func TestIcebergSchemaChange(t *testing.T) {
	t.Parallel()
	f, state := icebergFixture(t, icebergStores()[0], "append")
	good, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	with := func(sql string) {
		writeFile(t, f.jobPath, []byte(strings.Replace(string(good), cleanOrders, sql, 1)))
	}
	const narrow = "SELECT order_id, customer_id, product, CAST(amount AS INTEGER) AS amount FROM orders_source"
	with(narrow)
	monday := f.addCSVs("monday", 1, 10)
	f.mustRun()
	if v := readIceberg(t, state, f.env); v.Columns["amount"] != "int" {
		t.Fatalf("after Monday: amount is %q in the table, want int (the run's type)", v.Columns["amount"])
	}

	tuesday := f.addCSVs("tuesday", 1, 10)
	with("SELECT order_id, customer_id, product, CAST(amount AS VARCHAR) AS amount FROM orders_source")
	_, r := f.runExpect(1)
	assertMentions(t, r, "amount", "sales.orders")
	v := readIceberg(t, state, f.env)
	assertIcebergIDs(t, "after the failed run with amount as text", v, monday)
	if v.Columns["amount"] != "int" {
		t.Errorf("after the failed run: amount is %q, want int still", v.Columns["amount"])
	}

	with("SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount, 'x' AS note FROM orders_source")
	s := f.mustRun()
	assertFiles(t, "the run with a new column note and amount widened", s, 1)
	v = readIceberg(t, state, f.env)
	assertIcebergIDs(t, "after the run with a new column", v, concat(monday, tuesday))
	if v.Columns["note"] != "string" || v.Columns["amount"] != "long" {
		t.Errorf("after the run with a new column: columns %v, want note string and amount long", v.Columns)
	}
	for _, r := range monday {
		if n := v.Notes[fmt.Sprint(r.OrderID)]; n != nil {
			t.Errorf("Monday's order %d reads note %q, want null (the column came later)", r.OrderID, *n)
		}
	}
	for _, r := range tuesday {
		if n := v.Notes[fmt.Sprint(r.OrderID)]; n == nil || *n != "x" {
			t.Errorf("Tuesday's order %d reads note %v, want x", r.OrderID, n)
		}
	}

	with(narrow) // amount int again, no note: fits the evolved table
	wednesday := f.addCSVs("wednesday", 1, 10)
	f.mustRun()
	v = readIceberg(t, state, f.env)
	assertIcebergIDs(t, "after Wednesday (narrower files)", v, concat(monday, tuesday, wednesday))
	if v.Columns["amount"] != "long" || v.Columns["note"] != "string" {
		t.Errorf("after Wednesday: columns %v, want the evolved table's (never narrowed)", v.Columns)
	}
	amounts := map[int64]int64{}
	for _, r := range concat(monday, tuesday, wednesday) {
		amounts[r.OrderID] = r.Amount
	}
	for _, r := range v.Rows {
		if amounts[r[0]] != r[1] {
			t.Errorf("order %d reads amount %d, want %d", r[0], r[1], amounts[r[0]])
		}
	}
}
