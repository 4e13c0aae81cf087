package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
)

// crashSinks are the sink kinds of the crash matrix.
var crashSinks = []string{"file", "table"}

// TestCrashMatrix kills a run (SIGKILL, TIDEMARK_FAULT) at every step of
// the commit protocol, for every state store and for a file sink and a
// PostgreSQL table sink, then reruns the job from another host (which
// waits out the killed run's lease, as a host that cannot see the dead
// process must): every record is in the sink exactly once, nothing is
// left staged, and the run after reads nothing.
func TestCrashMatrix(t *testing.T) {
	t.Parallel()
	eachStateStore(t, func(t *testing.T, ss stateStore) {
		for _, kind := range crashSinks {
			for _, step := range fault.Steps {
				t.Run(kind+"/"+step, func(t *testing.T) {
					t.Parallel()
					testCrashAt(t, ss, kind, step)
				})
			}
		}
	})
}

// committedAt reports whether the state commit happened before step.
func committedAt(step string) bool {
	return slices.Index(fault.Steps, step) > slices.Index(fault.Steps, fault.AfterStage)
}

func testCrashAt(t *testing.T, ss stateStore, kind, step string) {
	opts := jobOpts{}
	if step == fault.AfterBatch {
		opts.top = []string{"batch_files: 1"} // Tuesday's 3 files in 3 batches: killed after the first
	}
	f, url := stateOn(t, local, ss, opts)
	var table *sqltest.DB
	if kind == "table" {
		table = sqltest.New(t, sqldb.Postgres)
		f.env = append(f.env, table.PasswordEnv+"="+table.Password)
		f.secrets = append(f.secrets, table.Password)
		job := tableSinkJob(url, f.in.loc(), table)
		if step == fault.AfterBatch {
			job += "batch_files: 1\n"
		}
		writeFile(t, f.jobPath, []byte(job))
	}
	sinkIDs := func() []int64 {
		t.Helper()
		if table == nil {
			var ids []int64
			for _, r := range f.readSink() {
				ids = append(ids, r.OrderID)
			}
			return ids
		}
		return tableOrderIDs(t, table)
	}
	ids := orderIDs

	monday := f.addCSVs("monday", 2, 20)
	if _, r := f.run([]string{"TIDEMARK_HOST_ID=host-a"}); r.code != 0 {
		t.Fatalf("first run: got exit %d\n%v", r.code, r)
	}
	tuesday := f.addCSVs("tuesday", 3, 20)
	_, r := f.run([]string{"TIDEMARK_HOST_ID=host-a", "TIDEMARK_FAULT=" + step}, "--lease-ttl", "2s")
	if r.signal != syscall.SIGKILL {
		t.Fatalf("run with TIDEMARK_FAULT=%s: want it killed at that step\n%v", step, r)
	}

	// Another host cannot tell that host-a's process is gone: it is told
	// the lease is held until the lease expires on the store's clock.
	var s runSummary
	deadline := time.Now().Add(time.Minute)
	for {
		s, r = f.run([]string{"TIDEMARK_HOST_ID=host-b"})
		if r.code == 0 {
			break
		}
		if r.code != 3 || !strings.Contains(r.stderr, "host-a") || time.Now().After(deadline) {
			t.Fatalf("rerun on host-b: got exit %d, want 3 naming host-a until the lease expires, then 0\n%v", r.code, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
	switch {
	case step == fault.AfterBatch:
		assertFiles(t, "rerun after a kill after the first batch", s, 2) // the batches not begun
	case committedAt(step):
		assertFiles(t, "rerun after a kill past the commit", s, 0)
	default:
		assertFiles(t, "rerun after a kill before the commit", s, 3)
	}
	assertIDSet(t, fmt.Sprintf("%s sink after the rerun", kind), sinkIDs(), ids(concat(monday, tuesday)))
	if left := f.stagedFiles(); table == nil && len(left) > 0 {
		t.Errorf("staged files left after the rerun: %v", firstFew(left))
	}
	if table != nil {
		if left := table.Strings(t, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE '\\_tidemark\\_stage\\_%'"); len(left) > 0 {
			t.Errorf("staging tables left after the rerun: %v", left)
		}
	}
	assertFiles(t, "the run after the rerun", f.mustRun(), 0)
	assertIDSet(t, fmt.Sprintf("%s sink at the end", kind), sinkIDs(), ids(concat(monday, tuesday)))
}

// tableOrderIDs reads the order ids in tableSinkJob's table.
func tableOrderIDs(t testing.TB, table *sqltest.DB) []int64 {
	t.Helper()
	var ids []int64
	for _, s := range table.Strings(t, "SELECT CAST(order_id AS TEXT) FROM orders_out") {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// orderIDs is the order ids of records.
func orderIDs(recs []record) []int64 {
	var out []int64
	for _, r := range recs {
		out = append(out, r.OrderID)
	}
	return out
}

// tableSinkJob is the sales job writing into a PostgreSQL table.
func tableSinkJob(state, landing string, db *sqltest.DB) string {
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
  - ctx: orders_table
    connection: %q
    password_env: %s
    table: orders_out
    mode: append
`, state, landing, cleanOrders, db.Connection, db.PasswordEnv)
}
