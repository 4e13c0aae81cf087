package postgres

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// indexedTables are the tables every query of a run must reach through
// an index, however many jobs and rows they hold.
var indexedTables = []string{objectsTable}

// TestEveryQueryUsesAnIndex makes every call a run makes (and a reset, and
// the catalog's) on sessions where the planner avoids sequential scans
// whenever an index can serve (enable_seqscan off), then reads the
// server's count of sequential scans of each table: a query without an
// index to serve it still scans sequentially and is counted.
func TestEveryQueryUsesAnIndex(t *testing.T) {
	db := newDB(t)
	u, _ := url.Parse(db.location("idx"))
	q := u.Query()
	q.Set("options", "-c enable_seqscan=off")
	q.Set("application_name", "tidemark-index-test")
	u.RawQuery = q.Encode()
	// The schema is made first (building its indexes scans the tables),
	// and counted only once its sessions have reported.
	setup, err := Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	setup.Close()
	waitSessionsGone(t, db)
	before := seqScans(t, db)
	s, err := Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	run := func(job, id string, base int64, files []string, superseded []string) {
		l, err := s.AcquireLease(ctx, job, store.Holder{ID: id}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if l, err = s.RenewLease(ctx, l, time.Hour); err != nil {
			t.Fatal(err)
		}
		s.CurrentLease(ctx, job)
		s.Head(ctx, job)
		s.SourceStates(ctx, job)
		s.Unpublished(ctx, job)
		for range s.Files(ctx, job, "src") {
		}
		for range s.PublishedOutputs(ctx, job, "/out/") {
		}
		r, err := s.BeginRun(ctx, l.Token, store.Run{Job: job, RunID: id, Host: "h"})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		c := store.Commit{Job: job, Token: l.Token, BaseVersion: base, Advance: true, Run: r,
			Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}},
			Ranges:  []store.RangeRecord{{Ctx: "tbl", Range: []byte(`{}`), Rows: 1}},
			Outputs: []store.Output{{RunID: id, Sink: "sink", Kind: "file", Root: "/out/", Staged: "s/" + id, Final: "part-" + id}},
			Actions: []store.SinkAction{{Sink: "sink", Root: "/out/", Mode: "overwrite"}},
			Catalog: catalog.Changes{Partitions: []catalog.Partition{{Database: "db", Table: "t", Values: []string{id}, Location: "/out/" + id}}},
		}
		for _, f := range files {
			c.Added = append(c.Added, store.FileRecord{Ctx: "src", File: bookmark.File{Path: f}})
		}
		for _, f := range superseded {
			c.Superseded = append(c.Superseded, store.FileRecord{Ctx: "src", File: bookmark.File{Path: f}})
		}
		if _, err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkPublished(ctx, job, l.Token, id); err != nil {
			t.Fatal(err)
		}
		s.Outputs(ctx, job, id)
		s.Actions(ctx, job, id)
		s.Run(ctx, job, id)
		s.Runs(ctx, job, store.RunQuery{Limit: 10})
		s.Versions(ctx, job, store.VersionQuery{Limit: 10})
		s.SourceStatesAt(ctx, job, base+1)
		for range s.RunInputs(ctx, job, []string{id}) {
		}
		for range s.RunRanges(ctx, job, []string{id}) {
		}
		if err := s.ReleaseLease(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ApplyCatalog(ctx, catalog.Changes{Databases: []catalog.Database{{Name: "db"}},
		Tables: []catalog.TableChange{{Table: catalog.Table{Database: "db", Name: "t", Location: "/out/", Format: "parquet",
			PartitionKeys: []catalog.Column{{Name: "run", Type: "VARCHAR"}}}}}}); err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		job := fmt.Sprint("job-", j)
		run(job, "r1", 0, []string{"a", "b"}, nil)
		run(job, "r2", 1, []string{"a", "c"}, []string{"a"})
		l, err := s.AcquireLease(ctx, job, store.Holder{ID: "reset"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Reset(ctx, job, l.Token, "r1", "test"); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkPurged(ctx, job, l.Token, "r2"); err != nil {
			t.Fatal(err)
		}
		s.ReleaseLease(ctx, l)
	}
	s.Table(ctx, "db", "t", 0)
	s.TableVersions(ctx, "db", "t")
	s.Tables(ctx, "db")
	for range s.Partitions(ctx, "db", "t") {
	}
	s.Close()
	waitSessionsGone(t, db)
	after := seqScans(t, db)
	for _, tbl := range indexedTables {
		if d := after[tbl] - before[tbl]; d != 0 {
			t.Errorf("table %s: %d sequential scans by a run's queries, want 0 (a query lacks an index)", tbl, d)
		}
	}
	var idx int64
	db.SQL.QueryRow(`SELECT sum(idx_scan) FROM pg_stat_user_tables WHERE schemaname = 'idx' AND relname = '` + objectsTable + `'`).Scan(&idx)
	if idx == 0 {
		t.Error("no index scans counted on state_objects: the counts were not reported, the test proves nothing")
	}
}

// waitSessionsGone waits for the store's sessions to end: a session
// reports its counts of scans when it ends.
func waitSessionsGone(t *testing.T, db *testDB) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		db.SQL.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tidemark-index-test'`).Scan(&n)
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store's sessions did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func seqScans(t *testing.T, db *testDB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	// This session's own cached statistics are dropped, so that it reads
	// what the others reported.
	db.SQL.Exec(`SELECT pg_stat_clear_snapshot()`)
	rows, err := db.SQL.Query(`SELECT relname, seq_scan FROM pg_stat_user_tables WHERE schemaname = 'idx'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		var c int64
		rows.Scan(&n, &c)
		out[n] = c
	}
	return out
}
