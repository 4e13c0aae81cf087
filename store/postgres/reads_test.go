package postgres

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store"
)

// TestQueriesReadWhatTheyReturn: in a job with thousands of runs, file
// records and outputs, each query a run makes reads about the rows it
// returns, not the job's history: the server's own counts of the tuples
// each table gave (sequential reads and index entries) are compared with
// what the query returned. A query served by an index on a prefix only
// (the job) and a filter, or by no index, reads thousands.
func TestQueriesReadWhatTheyReturn(t *testing.T) {
	db := newDB(t)
	u, _ := url.Parse(db.location("rd"))
	q := u.Query()
	q.Set("application_name", "tidemark-index-test")
	u.RawQuery = q.Encode()
	loc := u.String()
	ctx := t.Context()
	// The history is written in the relational format (as the tidemark
	// before kept it, the fastest way to make 3,000 runs) and converted
	// by the first open.
	old, err := connect(ctx, loc, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.migrate(ctx); err != nil {
		t.Fatal(err)
	}
	defer old.pool.Close()
	// History: 3,000 succeeded runs, each with 5 files and an output
	// published elsewhere; then run r-new with 7 files in ctx "new" and 3
	// unpublished outputs at /out/.
	// Autovacuum's reads would count as the queries'.
	//
	// The history is written on a session of its own that ends before
	// anything is measured: a session reports its table counts when it
	// ends, or when idle and a second has passed since its last report.
	// Written on the test's pooled connection, the outputs' 3,000 foreign
	// key checks on runs were reported a second later, inside whichever
	// case was being measured then (in CI, BeginRun: 3,005 runs read).
	su, _ := url.Parse(db.url)
	sq := su.Query()
	sq.Set("application_name", "tidemark-index-test")
	su.RawQuery = sq.Encode()
	setup, err := pgx.Connect(context.Background(), su.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`ALTER TABLE rd.runs SET (autovacuum_enabled = false);
ALTER TABLE rd.files SET (autovacuum_enabled = false);
ALTER TABLE rd.outputs SET (autovacuum_enabled = false);
ALTER TABLE rd.bookmark_versions SET (autovacuum_enabled = false)`, `INSERT INTO rd.runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version)
		SELECT 'job', 'r' || i, i, 1, 'enable', 'succeeded', i, i, i FROM generate_series(1, 3000) i;
INSERT INTO rd.bookmark_versions (job, version, run_id, kind, created_at)
		SELECT 'job', i, 'r' || i, 'commit', i FROM generate_series(1, 3000) i;
INSERT INTO rd.files (job, ctx, path, size, mtime, run_id, added_version)
		SELECT 'job', 'src', 'p' || i || '-' || k, 1, 1, 'r' || i, i FROM generate_series(1, 3000) i, generate_series(1, 5) k;
INSERT INTO rd.outputs (job, run_id, sink, final, kind, root, rows, bytes, published)
		SELECT 'job', 'r' || i, 'sink', 'part-' || i, 'file', '/old/', 1, 1, true FROM generate_series(1, 3000) i;
INSERT INTO rd.runs (job, run_id, seq, attempt, mode, status, started_at, finished_at, version)
		VALUES ('job', 'r-new', 3001, 1, 'enable', 'succeeded', 1, 1, 3001);
INSERT INTO rd.bookmark_versions (job, version, run_id, kind, created_at) VALUES ('job', 3001, 'r-new', 'commit', 3001);
INSERT INTO rd.files (job, ctx, path, size, mtime, run_id, added_version)
		SELECT 'job', 'new', 'n' || k, 1, 1, 'r-new', 3001 FROM generate_series(1, 7) k;
INSERT INTO rd.outputs (job, run_id, sink, final, kind, root, rows, bytes, published)
		SELECT 'job', 'r-new', 'sink', 'part-new-' || k, 'file', '/out/', 1, 1, k = 1 FROM generate_series(1, 3) k;
ANALYZE rd.runs;
ANALYZE rd.files;
ANALYZE rd.outputs;
ANALYZE rd.bookmark_versions`} {
		if _, err := setup.Exec(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
	}
	setup.Close(context.Background())
	old.pool.Close()
	seed, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := seed.AcquireLease(ctx, "job", store.Holder{ID: "a"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	seed.Close()
	waitSessionsGone(t, db)
	// The conversion's own reads are in the counts before the first case.
	if got := tupleReads(t, db, "rd")[objectsTable]; got < 3000 {
		t.Fatalf("the conversion's reads of %s are not reported yet (%d); every case's counts would be off", objectsTable, got)
	}

	reads := func(fn func(s *Store) int) (returned int, got map[string]int64) {
		t.Helper()
		before := tupleReads(t, db, "rd")
		s, err := Open(context.Background(), loc)
		if err != nil {
			t.Fatal(err)
		}
		returned = fn(s)
		s.Close()
		waitSessionsGone(t, db)
		after := tupleReads(t, db, "rd")
		got = map[string]int64{}
		for k, v := range after {
			got[k] = v - before[k]
		}
		return returned, got
	}
	type readCase struct {
		what   string
		tables []string
		fn     func(s *Store) int
	}
	cases := []readCase{
		{"Files of a ctx", []string{objectsTable}, func(s *Store) (n int) {
			for range s.Files(ctx, "job", "new") {
				n++
			}
			return n
		}},
		{"RunInputs of one run", []string{objectsTable}, func(s *Store) (n int) {
			for range s.RunInputs(ctx, "job", []string{"r-new"}) {
				n++
			}
			return n
		}},
		// The runs a join reaches are the planner's to read by index or
		// hash by its estimates; the outputs are what an index must find.
		// The objects keep no index of outputs by root: PublishedOutputs
		// reads the job's run records (as on S3), a few tuples per run,
		// and "returned" counts the 3,001 runs it must read.
		{"PublishedOutputs at a root", []string{objectsTable}, func(s *Store) (n int) {
			for range s.PublishedOutputs(ctx, "job", "/out/") {
				n++
			}
			if n != 1 {
				t.Fatalf("PublishedOutputs at /out/: %d, want 1", n)
			}
			return 3001
		}},
		{"Unpublished", []string{objectsTable}, func(s *Store) int {
			runs, err := s.Unpublished(ctx, "job")
			if err != nil {
				t.Fatal(err)
			}
			return len(runs)
		}},
		{"Runs, the newest page", []string{objectsTable}, func(s *Store) int {
			runs, _ := s.Runs(ctx, "job", store.RunQuery{Limit: 20})
			return len(runs)
		}},
		{"Runs, a page far back", []string{objectsTable}, func(s *Store) int {
			runs, _ := s.Runs(ctx, "job", store.RunQuery{Limit: 20, BeforeSeq: 100})
			return len(runs)
		}},
		{"Head", []string{objectsTable}, func(s *Store) int {
			s.Head(ctx, "job")
			return 1
		}},
		{"Outputs of a run", []string{objectsTable}, func(s *Store) int {
			outs, _ := s.Outputs(ctx, "job", "r-new")
			return len(outs)
		}},
		{"BeginRun and FailRun", []string{objectsTable}, func(s *Store) int {
			if _, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: "x-" + time.Now().String()}); err != nil {
				t.Fatal(err)
			}
			return 2
		}},
	}
	// A plan that depends on a near tie of the planner's estimates flips
	// with the server's cost settings: each query is measured under the
	// default random_page_cost and under one raised as on spinning disks
	// (where counting the failed runs above the last success scanned
	// every run of the job).
	for _, cost := range []string{"4", "8"} {
		db.Exec(t, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET random_page_cost = `+cost+`', current_database()); END $$`)
		for _, tc := range cases {
			tc.what += " (random_page_cost " + cost + ")"
			n, got := reads(tc.fn)
			checkReads(t, tc.what, tc.tables, n, got)
		}
	}
}

// objectsTable is the table of the state's objects.
const objectsTable = "state_objects"

// checkReads fails the test when a query read more tuples of a table than
// a bounded multiple of the n rows it returned.
func checkReads(t *testing.T, what string, tables []string, n int, got map[string]int64) {
	t.Helper()
	if n == 0 {
		t.Fatalf("%s: returned nothing; the test's data is wrong", what)
	}
	for _, tbl := range tables {
		// Slack for the index's boundary entries and a join's probes.
		if limit := int64(3*n + 10); got[tbl] > limit {
			t.Errorf("%s: read %d tuples of %s for %d returned, want at most %d (a query walks the job's history)",
				what, got[tbl], tbl, n, limit)
		}
	}
	t.Logf("%s: %d returned, read %v", what, n, got)
}

// tupleReads sums, per table of schema, the tuples sequential scans read
// and the index entries index scans returned.
func tupleReads(t *testing.T, db *testDB, schema string) map[string]int64 {
	t.Helper()
	db.SQL.Exec(`SELECT pg_stat_clear_snapshot()`)
	rows, err := db.SQL.Query(`
		SELECT t.relname, coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0)
		FROM pg_stat_user_tables t WHERE t.schemaname = $1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var n string
		var c int64
		if err := rows.Scan(&n, &c); err != nil {
			t.Fatal(err)
		}
		out[n] = c
	}
	return out
}
