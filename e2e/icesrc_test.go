package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// icebergReaderJob is a job reading the Iceberg table sales.orders
// incrementally into a Parquet folder, with its state at state.
func icebergReaderJob(state, out, extra string) string {
	return fmt.Sprintf(`job: reader
state: %q
sources:
  - ctx: orders_ice
    iceberg: {table: sales.orders}
%ssinks:
  - ctx: copy
    path: %q
    format: parquet
`, state, extra, out)
}

// pyicebergDelete deletes the rows with order ids argv[3:].
const pyicebergDelete = `
import sys
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import In
cat = SqlCatalog("tidemark", uri=sys.argv[1])
t = cat.load_table(sys.argv[2])
t.delete(In("order_id", [int(i) for i in sys.argv[3:]]))
print(t.current_snapshot().snapshot_id)
`

// TestIcebergSourceChain: a job writes the Iceberg table sales.orders
// (tidemark's own sink) and pyiceberg appends to it too; a second job
// reads the table incrementally into Parquet. Each of its runs reads
// exactly the rows added since the last (three runs, the third reading
// nothing), plan lists the snapshots and files, bookmark show names the
// snapshot, and a delete snapshot fails the next run (exit 1), naming the
// table, the snapshot and the reset, with nothing written.
func TestIcebergSourceChain(t *testing.T) { t.Parallel(); testIcebergSourceChain(t, local) }

// TestSparkIcebergSourceChain is TestIcebergSourceChain with Spark reading
// the table's data files.
func TestSparkIcebergSourceChain(t *testing.T) { t.Parallel(); testIcebergSourceChain(t, onSpark) }

func testIcebergSourceChain(t *testing.T, be backend) {
	f, state := icebergFixture(t, icebergStores()[0], "append")
	out := filepath.Join(t.TempDir(), "copy")
	reader := filepath.Join(filepath.Dir(f.jobPath), "reader.yaml")
	job := icebergReaderJob(state, out, "")
	if be == onSpark {
		job = strings.Replace(job, "\nsources:", "\n"+sparkEngine(t)+"\nsources:", 1)
	}
	writeFile(t, reader, []byte(job))
	run := func(what string, code int) (runSummary, result) {
		t.Helper()
		r := f.tidemark(nil, "run", reader, "--json")
		if r.code != code {
			t.Fatalf("%s: reader run exit %d, want %d\n%v", what, r.code, code, r)
		}
		return decodeOne[runSummary](t, r), r
	}
	copyFormat := sinkFormat{format: "parquet"}

	monday := f.addCSVs("monday", 3, 20)
	f.mustRun()
	first, _ := run("run 1", 0)
	if got := first.Sources["orders_ice"].Rows; got != int64(len(monday)) {
		t.Errorf("run 1 read %d rows, want %d", got, len(monday))
	}
	assertRecords(t, "the copy after run 1", readSink(t, out, copyFormat), monday)

	external := appendIceberg(t, state, 900001, 900002)
	tuesday := f.addCSVs("tuesday", 2, 15)
	f.mustRun()
	pr := f.tidemark(nil, "plan", reader, "--json")
	if pr.code != 0 {
		t.Fatalf("plan: exit %d\n%v", pr.code, pr)
	}
	var pv struct {
		Sources map[string]struct {
			Files     int64    `json:"files"`
			New       []string `json:"new"`
			Kind      string   `json:"kind"`
			Table     string   `json:"table"`
			Snapshots []struct {
				ID    int64 `json:"snapshot_id"`
				Files int64 `json:"files"`
				Rows  int64 `json:"rows"`
			} `json:"snapshots"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(pr.stdout), &pv); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, pr.stdout)
	}
	ps := pv.Sources["orders_ice"]
	var planned int64
	for _, s := range ps.Snapshots {
		planned += s.Rows
	}
	if ps.Kind != "iceberg" || ps.Table != "sales.orders" || len(ps.Snapshots) != 2 || ps.Files != int64(len(ps.New)) ||
		planned != int64(len(external)+len(tuesday)) {
		t.Errorf("plan --json: %+v, want the two snapshots since run 1 (pyiceberg's and the sink's) with %d rows",
			ps, len(external)+len(tuesday))
	}
	text := f.tidemark(nil, "plan", reader)
	assertMentions(t, text, "source orders_ice (Iceberg table sales.orders): 2 files to read", "2 snapshots after",
		fmt.Sprint(ps.Snapshots[0].ID))
	second, _ := run("run 2", 0)
	runs := f.tidemark(nil, "runs", reader)
	assertMentions(t, runs, "Iceberg table sales.orders, 2 snapshots after", "the whole table at snapshot")
	if got := second.Sources["orders_ice"].Rows; got != int64(len(external)+len(tuesday)) {
		t.Errorf("run 2 read %d rows, want %d (only what was added since run 1)", got, len(external)+len(tuesday))
	}
	all := concat(monday, external, tuesday)
	assertRecords(t, "the copy after run 2", readSink(t, out, copyFormat), all)

	third, _ := run("run 3", 0)
	assertFiles(t, "run 3 (nothing new)", third, 0)
	assertRecords(t, "the copy after run 3", readSink(t, out, copyFormat), all)

	bs := f.tidemark(nil, "bookmark", "show", reader, "--json")
	var bv struct {
		Sources map[string]struct {
			Kind       string `json:"kind"`
			SnapshotID int64  `json:"snapshot_id"`
			Table      string `json:"table"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(bs.stdout), &bv); err != nil || bv.Sources["orders_ice"].SnapshotID == 0 ||
		bv.Sources["orders_ice"].Kind != "iceberg" || bv.Sources["orders_ice"].Table != "sales.orders" {
		t.Errorf("bookmark show --json: %v\n%s", err, bs.stdout)
	}
	text = f.tidemark(nil, "bookmark", "show", reader)
	if want := fmt.Sprintf("read up to snapshot %d", bv.Sources["orders_ice"].SnapshotID); !strings.Contains(text.output(), want) {
		t.Errorf("bookmark show says %q, want %q", text.output(), want)
	}

	script := filepath.Join(t.TempDir(), "delete.py")
	writeFile(t, script, []byte(pyicebergDelete))
	del, err := exec.CommandContext(t.Context(), os.Getenv(envPyiceberg), script, "sqlite:///"+state, "sales.orders",
		fmt.Sprint(external[0].OrderID)).Output()
	if err != nil {
		t.Fatalf("pyiceberg deleting a row: %v", err)
	}
	f.addCSVs("wednesday", 1, 5)
	f.mustRun()
	_, r := run("the run after the delete", 1)
	assertMentions(t, r, "sales.orders", strings.TrimSpace(string(del)), "bookmark reset reader", "on_rewrite")
	assertRecords(t, "the copy after the refused run", readSink(t, out, copyFormat), all)
}

// TestIcebergSourceRewind: pause with --job-bookmark-from/--to reads again
// exactly the rows the runs (from, to] read; `bookmark reset --to-run
// --purge-output` rewinds the bookmark to a run's snapshot, and the next
// run reads the snapshots after it again: the copy holds every row once.
func TestIcebergSourceRewind(t *testing.T) {
	t.Parallel()
	f, state := icebergFixture(t, icebergStores()[0], "append")
	out := filepath.Join(t.TempDir(), "copy")
	reader := filepath.Join(filepath.Dir(f.jobPath), "reader.yaml")
	writeFile(t, reader, []byte(icebergReaderJob(state, out, "")))
	copyFormat := sinkFormat{format: "parquet"}
	run := func(what string, flags ...string) runSummary {
		t.Helper()
		r := f.tidemark(nil, append([]string{"run", reader, "--json"}, flags...)...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%v", what, r.code, r)
		}
		return decodeOne[runSummary](t, r)
	}

	monday := f.addCSVs("monday", 2, 10)
	f.mustRun()
	mon := run("run 1")
	tuesday := f.addCSVs("tuesday", 2, 10)
	f.mustRun()
	tue := run("run 2")
	wednesday := f.addCSVs("wednesday", 1, 10)
	f.mustRun()

	again := run("pause (run 1, run 2]", "--job-bookmark-option", "pause", "--job-bookmark-from", mon.RunID,
		"--job-bookmark-to", tue.RunID)
	assertRecords(t, "the pause run's output", readSinkRun(t, out, copyFormat, again.RunID), tuesday)

	r := f.tidemark(nil, "bookmark", "reset", reader, "--to-run", mon.RunID, "--purge-output")
	if r.code != 0 {
		t.Fatalf("bookmark reset: exit %d\n%v", r.code, r)
	}
	assertRecords(t, "the copy after the reset to run 1", readSink(t, out, copyFormat), monday)
	run("the run after the reset")
	assertRecords(t, "the copy after the run after the reset", readSink(t, out, copyFormat), concat(monday, tuesday, wednesday))
}
