package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStateLocation: the state is found, in order, by --state, the job
// file's state:, TIDEMARK_STATE, then .tidemark/state.db next to the job.
func TestStateLocation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	defaultDB := filepath.Join(f.dir, ".tidemark", "state.db")
	envDB := filepath.Join(f.dir, "env", "state.db")
	jobDB := filepath.Join(f.dir, "jobstate", "state.db")
	flagDB := filepath.Join(f.dir, "flag", "state.db")
	for _, d := range []string{envDB, jobDB, flagDB} {
		if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	}
	runs := func(env []string, args ...string) int {
		t.Helper()
		r := f.tidemark(env, append([]string{"runs", f.jobPath, "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("runs: got exit %d, want 0\n%v", r.code, r)
		}
		return len(decodeOne[[]runSummary](t, r))
	}

	f.addCSVs("a", 1, 10)
	env := []string{"TIDEMARK_STATE=" + envDB}
	if _, r := f.run(env); r.code != 0 {
		t.Fatalf("run with TIDEMARK_STATE: got exit %d, want 0\n%v", r.code, r)
	}
	if !exists(envDB) || exists(defaultDB) {
		t.Errorf("TIDEMARK_STATE=%s: state at env path %v, at default %v; want only the env path", envDB, exists(envDB), exists(defaultDB))
	}
	if got := runs(env); got != 1 {
		t.Errorf("runs with TIDEMARK_STATE: got %d runs, want 1", got)
	}

	// The job file's state: wins over TIDEMARK_STATE. Each fresh state
	// adopts the sink on purpose (the sink holds the other state's output).
	f.writeJob(jobOpts{top: []string{"state: " + jobDB}})
	if _, r := f.run(env, "--adopt-sink"); r.code != 0 {
		t.Fatalf("run with state: in the job file: got exit %d, want 0\n%v", r.code, r)
	}
	if !exists(jobDB) {
		t.Errorf("state: %s in the job file: no state there", jobDB)
	}
	if got := runs(env); got != 1 {
		t.Errorf("runs with state: in the job file: got %d runs, want 1 (a fresh state)", got)
	}

	// --state wins over both.
	if _, r := f.run(env, "--state", flagDB, "--adopt-sink"); r.code != 0 {
		t.Fatalf("run --state: got exit %d, want 0\n%v", r.code, r)
	}
	if !exists(flagDB) {
		t.Errorf("--state %s: no state there", flagDB)
	}
	if got := runs(env, "--state", flagDB); got != 1 {
		t.Errorf("runs --state: got %d runs, want 1", got)
	}
	if got := runs(env, "--state", envDB); got != 1 {
		t.Errorf("runs --state %s: got %d runs, want still 1", envDB, got)
	}
}

// TestJobFileBookmarkMode: the job file's bookmark: sets the default mode
// and --job-bookmark-option overrides it.
func TestJobFileBookmarkMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{top: []string{"bookmark: pause"}})
	a := f.addCSVs("a", 2, 10)
	assertFiles(t, "paused run", f.mustRun(), 2)
	assertFiles(t, "paused run again", f.mustRun(), 2)
	assertFiles(t, "enabled run", f.mustRun("--job-bookmark-option", "job-bookmark-enable"), 2)
	if got := f.planFiles(); got != 0 {
		t.Errorf("plan after the enabled run: files = %d, want 0", got)
	}
	f.assertSink(concat(a, a, a))
}

// TestTwoSources: each source ctx has its own bookmark; a job with two
// sources and two sinks reads each source's new files only.
func TestTwoSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orders, returns := filepath.Join(dir, "orders"), filepath.Join(dir, "returns")
	ordersOut, returnsOut := filepath.Join(dir, "out", "orders"), filepath.Join(dir, "out", "returns")
	job := filepath.Join(dir, "job.yaml")
	writeFile(t, job, []byte(`job: two
sources:
  - ctx: orders_source
    path: "`+orders+`"
    format: csv
    options: {header: true}
  - ctx: returns_source
    path: "`+returns+`"
    format: json
transforms:
  clean_orders: |
    SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM orders_source
  clean_returns: |
    SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount FROM returns_source
sinks:
  - ctx: orders_sink
    from: clean_orders
    path: "`+ordersOut+`"
    format: parquet
  - ctx: returns_sink
    from: clean_returns
    path: "`+returnsOut+`"
    format: parquet
    partition_by: [product]
`))
	g := newGen()
	run := func() runSummary {
		t.Helper()
		r := tidemark(t, dir, nil, "run", job, "--json")
		if r.code != 0 {
			t.Fatalf("run: got exit %d, want 0\n%v", r.code, r)
		}
		return decodeOne[runSummary](t, r)
	}
	o1, r1 := g.records(20), g.records(10)
	writeCSV(t, filepath.Join(orders, "o1.csv"), o1)
	writeJSONL(t, filepath.Join(returns, "r1.json"), r1)
	s := run()
	if s.Sources["orders_source"].Files != 1 || s.Sources["returns_source"].Files != 1 {
		t.Errorf("first run: files = %d orders, %d returns; want 1, 1", s.Sources["orders_source"].Files, s.Sources["returns_source"].Files)
	}

	o2 := g.records(20)
	writeCSV(t, filepath.Join(orders, "o2.csv"), o2)
	s = run()
	if s.Sources["orders_source"].Files != 1 || s.Sources["returns_source"].Files != 0 {
		t.Errorf("second run: files = %d orders, %d returns; want 1, 0", s.Sources["orders_source"].Files, s.Sources["returns_source"].Files)
	}
	if s.Sinks["orders_sink"].Rows != 20 || s.Sinks["returns_sink"].Rows != 0 {
		t.Errorf("second run: sink rows = %d orders, %d returns; want 20, 0", s.Sinks["orders_sink"].Rows, s.Sinks["returns_sink"].Rows)
	}
	assertSink(t, ordersOut, sinkFormat{format: "parquet"}, concat(o1, o2))
	assertSink(t, returnsOut, parquetByProduct, r1)
}
