package e2e

import (
	"testing"
)

// TestEngineOptions: the job file's engine options (memory_limit, threads,
// as in the README) are accepted and reach the engine: the transform reads
// them back with DuckDB's current_setting, and they land in the output.
func TestEngineOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{
		top: []string{"engine: {duckdb: {memory_limit: 1GiB, threads: 1}}"},
		transform: `SELECT order_id, customer_id, product, CAST(amount AS BIGINT) AS amount, ` +
			`current_setting('memory_limit') AS memory_limit, CAST(current_setting('threads') AS BIGINT) AS threads FROM orders_source`,
		partitionBy: "-",
	})
	recs := f.addCSVs("a", 2, 20)
	f.mustRun()
	f.assertSink(recs)

	files := f.sinkFiles()
	var limit string
	var threads, n int64
	q := "SELECT any_value(memory_limit), any_value(threads), count(DISTINCT (memory_limit, threads)) FROM " + readerSQL(files, f.sink)
	if err := duck.QueryRow(q).Scan(&limit, &threads, &n); err != nil {
		t.Fatalf("reading back the settings: %v", err)
	}
	if limit != "1.0 GiB" || threads != 1 || n != 1 {
		t.Errorf("the engine ran with memory_limit %q, threads %d (%d distinct); want 1.0 GiB and 1 from the job file", limit, threads, n)
	}
}
