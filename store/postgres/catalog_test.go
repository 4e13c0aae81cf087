package postgres

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// Until store/storetest has the catalog's cases, these check the
// contract of catalog.Store on this backend.

func salesTable(version int64, cols ...string) catalog.Table {
	t := catalog.Table{Database: "sales_db", Name: "orders", Version: version, Location: "s3://in/orders/", Format: "csv",
		Compression: "gzip", Options: map[string]string{"header": "true"},
		PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}},
		Parameters:    map[string]string{"classification": "csv"}}
	for _, c := range cols {
		t.Columns = append(t.Columns, catalog.Column{Name: c, Type: "BIGINT"})
	}
	return t
}

func mustApply(t *testing.T, s *Store, c catalog.Changes) {
	t.Helper()
	if err := s.ApplyCatalog(t.Context(), c); err != nil {
		t.Fatalf("ApplyCatalog: %v", err)
	}
}

func partitions(t *testing.T, s *Store, db, name string) []catalog.Partition {
	t.Helper()
	var out []catalog.Partition
	for p, err := range s.Partitions(t.Context(), db, name) {
		if err != nil {
			t.Fatal(err)
		}
		if p.UpdatedAt.IsZero() {
			t.Errorf("partition %v has no UpdatedAt", p.Values)
		}
		p.UpdatedAt = time.Time{}
		out = append(out, p)
	}
	return out
}

// sameTable compares tables without the store's UpdatedAt.
func sameTable(t *testing.T, what string, got, want catalog.Table) {
	t.Helper()
	if got.UpdatedAt.IsZero() {
		t.Errorf("%s: UpdatedAt not set", what)
	}
	got.UpdatedAt = time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func TestCatalogTablesAndVersions(t *testing.T) {
	s := newDB(t).open(t)
	ctx := t.Context()
	mustApply(t, s, catalog.Changes{
		Databases: []catalog.Database{{Name: "sales_db", Description: "sales"}},
		Tables:    []catalog.TableChange{{Table: salesTable(99, "id")}},
	})
	mustApply(t, s, catalog.Changes{Databases: []catalog.Database{{Name: "sales_db", Description: "changed"}, {Name: "a_db"}}})
	dbs, err := s.Databases(ctx)
	if err != nil || len(dbs) != 2 || dbs[0].Name != "a_db" || dbs[1].Description != "sales" || dbs[1].CreatedAt.IsZero() {
		t.Fatalf("Databases = %+v, %v; want a_db and sales_db as first created", dbs, err)
	}

	v1 := salesTable(1, "id")
	got, err := s.Table(ctx, "sales_db", "orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	sameTable(t, "Table(current) after create", got, v1)

	// A stale base conflicts and changes nothing; the fresh one writes v2.
	err = s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0, "id", "amount"), Base: 0}}})
	if !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("creating an existing table: %v, want ErrConflict", err)
	}
	mustApply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0, "id", "amount"), Base: 1}}})
	err = s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0, "x"), Base: 1}}})
	if !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("a change on a stale base: %v, want ErrConflict", err)
	}
	v2 := salesTable(2, "id", "amount")
	got, _ = s.Table(ctx, "sales_db", "orders", 0)
	sameTable(t, "Table(current) after a change", got, v2)
	got, _ = s.Table(ctx, "sales_db", "orders", 1)
	sameTable(t, "Table(version 1)", got, v1)
	vs, err := s.TableVersions(ctx, "sales_db", "orders")
	if err != nil || len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 {
		t.Errorf("TableVersions = %+v, %v; want 2, 1", vs, err)
	}
	for _, v := range []int64{3, -1} {
		if _, err := s.Table(ctx, "sales_db", "orders", v); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("Table(version %d): %v, want ErrNotFound", v, err)
		}
	}
	if _, err := s.Table(ctx, "sales_db", "nope", 0); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("Table(unknown): %v, want ErrNotFound", err)
	}
	mustApply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: catalog.Table{Database: "sales_db", Name: "aaa", Location: "/x", Format: "json"}}}})
	ts, err := s.Tables(ctx, "sales_db")
	if err != nil || len(ts) != 2 || ts[0].Name != "aaa" || ts[1].Version != 2 {
		t.Errorf("Tables = %+v, %v; want aaa v1, orders v2", ts, err)
	}
	if ts, err := s.Tables(ctx, "no_db"); err != nil || len(ts) != 0 {
		t.Errorf("Tables(unknown) = %+v, %v; want none", ts, err)
	}

	// Drop: every version and partition goes; a stale base is refused.
	mustApply(t, s, catalog.Changes{Partitions: []catalog.Partition{{Database: "sales_db", Table: "orders", Values: []string{"1"}, Location: "s3://in/orders/day=1/"}}})
	if err := s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0), Base: 1, Drop: true}}}); !errors.Is(err, catalog.ErrConflict) {
		t.Errorf("drop on a stale base: %v, want ErrConflict", err)
	}
	mustApply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0), Base: 2, Drop: true}}})
	if vs, _ := s.TableVersions(ctx, "sales_db", "orders"); len(vs) != 0 {
		t.Errorf("TableVersions after drop: %d, want none", len(vs))
	}
	if ps := partitions(t, s, "sales_db", "orders"); len(ps) != 0 {
		t.Errorf("Partitions after drop: %+v, want none", ps)
	}
	// Made again from nothing, it starts at version 1.
	mustApply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0, "id")}}})
	if got, err := s.Table(ctx, "sales_db", "orders", 0); err != nil || got.Version != 1 || len(partitions(t, s, "sales_db", "orders")) != 0 {
		t.Errorf("re-created table: %+v, %v; want version 1 with no partitions", got, err)
	}
}

func TestCatalogPartitions(t *testing.T) {
	s := newDB(t).open(t)
	ctx := t.Context()
	mustApply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0, "id")}}})
	part := func(loc string, vals ...string) catalog.Partition {
		return catalog.Partition{Database: "sales_db", Table: "orders", Values: vals, Location: loc}
	}
	mustApply(t, s, catalog.Changes{Partitions: []catalog.Partition{
		part("/b", "b", "1"), part("/a10", "a", "10"), part("/a", "a"), part("/A", "A", "2"), part("/a9", "a", "9"), part("/é", "é"),
	}})
	want := []catalog.Partition{part("/A", "A", "2"), part("/a", "a"), part("/a10", "a", "10"), part("/a9", "a", "9"), part("/b", "b", "1"), part("/é", "é")}
	if got := partitions(t, s, "sales_db", "orders"); !reflect.DeepEqual(got, want) {
		t.Errorf("Partitions in byte order:\n got %+v\nwant %+v", got, want)
	}
	// Replaced by values; dropped, missing ones too; a table that does not
	// exist fails the whole change.
	dep := part("/b2", "b", "1")
	dep.Deprecated = true
	mustApply(t, s, catalog.Changes{Partitions: []catalog.Partition{dep},
		DropPartitions: []catalog.PartitionRef{{Database: "sales_db", Table: "orders", Values: []string{"a"}}, {Database: "sales_db", Table: "orders", Values: []string{"zz"}}}})
	err := s.ApplyCatalog(ctx, catalog.Changes{Partitions: []catalog.Partition{part("/c", "c"), {Database: "sales_db", Table: "nope", Values: []string{"x"}}}})
	if !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("a partition of a missing table: %v, want ErrNotFound", err)
	}
	want = []catalog.Partition{part("/A", "A", "2"), part("/a10", "a", "10"), part("/a9", "a", "9"), dep, part("/é", "é")}
	if got := partitions(t, s, "sales_db", "orders"); !reflect.DeepEqual(got, want) {
		t.Errorf("Partitions after replace, drop and a failed change:\n got %+v\nwant %+v", got, want)
	}
	// Stopping early is fine.
	for _, err := range s.Partitions(ctx, "sales_db", "orders") {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
}

// TestCatalogRace: changes racing on one base: exactly one wins.
func TestCatalogRace(t *testing.T) {
	s := newDB(t).open(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.ApplyCatalog(t.Context(), catalog.Changes{Tables: []catalog.TableChange{{Table: salesTable(0, "id")}}})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, catalog.ErrConflict):
			t.Errorf("racing create: %v, want nil or ErrConflict", err)
		}
	}
	if won != 1 {
		t.Errorf("%d racing creates won, want 1", won)
	}
}

// TestCommitAppliesCatalog: a commit's catalog changes are in its
// transaction: applied with it, and a conflicting one fails the whole
// commit.
func TestCommitAppliesCatalog(t *testing.T) {
	s := newDB(t).open(t)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "job", store.Holder{ID: "a"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(id string, base int64, tbl int64) error {
		r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "job", RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		_, err = s.Commit(ctx, store.Commit{Job: "job", Token: l.Token, Advance: true, BaseVersion: base, Run: r,
			Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}},
			Added:   []store.FileRecord{{Ctx: "src", File: bookmark.File{Path: id}}},
			Catalog: catalog.Changes{
				Databases:  []catalog.Database{{Name: "sales_db"}},
				Tables:     []catalog.TableChange{{Table: salesTable(0, "id"), Base: tbl}},
				Partitions: []catalog.Partition{{Database: "sales_db", Table: "orders", Values: []string{id}, Location: "/" + id}},
			}})
		return err
	}
	if err := commit("r1", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := commit("r2", 1, 0); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("a commit whose catalog change is stale: %v, want catalog.ErrConflict", err)
	}
	if h, _ := s.Head(ctx, "job"); h.Version != 1 {
		t.Errorf("head after a commit refused for its catalog change: %d, want 1", h.Version)
	}
	if r := mustRun(t, s, "job", "r2"); r.Status != store.StatusRunning {
		t.Errorf("run r2 after its refused commit: %s, want running", r.Status)
	}
	if ps := partitions(t, s, "sales_db", "orders"); len(ps) != 1 || ps[0].Values[0] != "r1" {
		t.Errorf("partitions after a refused commit: %+v, want r1's only", ps)
	}
	if err := commit("r3", 1, 1); err != nil {
		t.Fatal(err)
	}
	if tb, _ := s.Table(ctx, "sales_db", "orders", 0); tb.Version != 2 || len(partitions(t, s, "sales_db", "orders")) != 2 {
		t.Errorf("after r3: table version %d, want 2 with 2 partitions", tb.Version)
	}
}
