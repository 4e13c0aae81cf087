package objcore

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

func table(db, name, loc string) catalog.Table {
	return catalog.Table{Database: db, Name: name, Location: loc, Format: "parquet",
		Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}}, PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}}}
}

func part(db, name, day string) catalog.Partition {
	return catalog.Partition{Database: db, Table: name, Values: []string{day}, Location: "s3://lake/" + name + "/day=" + day + "/"}
}

// TestCatalog: tables get versions by compare-and-swap on Base, partitions
// are added, replaced and dropped in Values order, a drop removes all.
func TestCatalog(t *testing.T) {
	s := openMem(t, nil)
	ctx := t.Context()
	err := s.ApplyCatalog(ctx, catalog.Changes{
		Databases:  []catalog.Database{{Name: "sales"}},
		Tables:     []catalog.TableChange{{Table: table("sales", "orders", "s3://lake/orders/")}},
		Partitions: []catalog.Partition{part("sales", "orders", "2"), part("sales", "orders", "1")},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: table("sales", "orders", "s3://x/"), Base: 0}}})
	if !errors.Is(err, catalog.ErrConflict) {
		t.Errorf("a change on a stale base: %v, want ErrConflict", err)
	}
	if err := s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: table("sales", "orders", "s3://lake/v2/"), Base: 1}},
		DropPartitions: []catalog.PartitionRef{{Database: "sales", Table: "orders", Values: []string{"2"}}},
		Partitions:     []catalog.Partition{part("sales", "orders", "3")}}); err != nil {
		t.Fatal(err)
	}
	err = s.ApplyCatalog(ctx, catalog.Changes{Partitions: []catalog.Partition{part("sales", "nope", "1")}})
	if !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("a partition of a missing table: %v, want ErrNotFound", err)
	}
	dbs, err := s.Databases(ctx)
	if err != nil || len(dbs) != 1 || dbs[0].Name != "sales" || dbs[0].CreatedAt.IsZero() {
		t.Errorf("Databases = %+v, %v; want sales with a creation time", dbs, err)
	}
	cur, err := s.Table(ctx, "sales", "orders", 0)
	if err != nil || cur.Version != 2 || cur.Location != "s3://lake/v2/" {
		t.Errorf("Table(current) = %+v, %v; want version 2 at s3://lake/v2/", cur, err)
	}
	v1, err := s.Table(ctx, "sales", "orders", 1)
	if err != nil || v1.Version != 1 || v1.Location != "s3://lake/orders/" {
		t.Errorf("Table(1) = %+v, %v; want version 1", v1, err)
	}
	if _, err := s.Table(ctx, "sales", "orders", 3); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("Table(3): %v, want ErrNotFound", err)
	}
	vs, err := s.TableVersions(ctx, "sales", "orders")
	if err != nil || len(vs) != 2 || vs[0].Version != 2 {
		t.Errorf("TableVersions = %d versions, %v; want 2, newest first", len(vs), err)
	}
	if got := days(t, s, "orders"); !slices.Equal(got, []string{"1", "3"}) {
		t.Errorf("partitions = %v, want [1 3]", got)
	}
	if err := s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: table("sales", "orders", ""), Base: 2, Drop: true}}}); err != nil {
		t.Fatal(err)
	}
	if ts, _ := s.Tables(ctx, "sales"); len(ts) != 0 {
		t.Errorf("Tables after the drop = %v, want none", ts)
	}
	if got := days(t, s, "orders"); len(got) != 0 {
		t.Errorf("partitions after the drop = %v, want none", got)
	}
}

// days lists a table's partitions' first values.
func days(t *testing.T, s *Store, name string) []string {
	t.Helper()
	var out []string
	for p, err := range s.Partitions(t.Context(), "sales", name) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Values[0])
	}
	return out
}

// TestCatalogRace: of writers racing on one table's base, exactly one
// wins; the others get ErrConflict.
func TestCatalogRace(t *testing.T) {
	s := openMem(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.ApplyCatalog(t.Context(), catalog.Changes{Databases: []catalog.Database{{Name: "sales"}},
				Tables: []catalog.TableChange{{Table: table("sales", "t", fmt.Sprint(i))}}})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, catalog.ErrConflict):
			t.Errorf("racing ApplyCatalog: %v, want nil or ErrConflict", err)
		}
	}
	if won != 1 {
		t.Errorf("%d writers won, want 1", won)
	}
}

// TestCommitCatalog: a commit's catalog changes are visible exactly when
// the commit is; a stale base fails the whole commit; a commit fenced out
// by a lost lease leaves its reserved changes invisible, and they stop
// holding the table.
func TestCommitCatalog(t *testing.T) {
	s := openMem(t, nil)
	ctx := t.Context()
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(id string, base int64, tableBase int64) error {
		r, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		r.Status = store.StatusSucceeded
		_, err = s.Commit(ctx, store.Commit{Job: "j", Token: l.Token, Advance: true, BaseVersion: base, Run: r,
			Sources: map[string]bookmark.SourceState{"src": {Kind: "files"}},
			Catalog: catalog.Changes{Databases: []catalog.Database{{Name: "sales"}},
				Tables:     []catalog.TableChange{{Table: table("sales", "orders", "s3://lake/"+id+"/"), Base: tableBase}},
				Partitions: []catalog.Partition{part("sales", "orders", id)}}})
		return err
	}
	if err := commit("r1", 0, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Table(ctx, "sales", "orders", 0); err != nil || got.Location != "s3://lake/r1/" {
		t.Fatalf("table after r1's commit = %+v, %v; want at s3://lake/r1/", got, err)
	}
	if err := commit("r2", 1, 0); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("commit with a stale table base: %v, want ErrConflict", err)
	}
	if h, _ := s.Head(ctx, "j"); h.Version != 1 {
		t.Errorf("head after the refused commit = version %d, want 1", h.Version)
	}
	// r3 reserves its change, but its swap is fenced: the lease was taken.
	r3, err := s.BeginRun(ctx, l.Token, store.Run{Job: "j", RunID: "r3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BreakLease(ctx, "j", l.Token); err != nil {
		t.Fatal(err)
	}
	l2, err := s.AcquireLease(ctx, "j", store.Holder{ID: "h2"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	r3.Status = store.StatusSucceeded
	_, err = s.Commit(ctx, store.Commit{Job: "j", Token: l.Token, Advance: true, BaseVersion: 1, Run: r3,
		Catalog: catalog.Changes{Tables: []catalog.TableChange{{Table: table("sales", "orders", "s3://lake/r3/"), Base: 1}}}})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("fenced commit: %v, want ErrLeaseLost", err)
	}
	// Plant the reservation a fenced commit would have left (its swap
	// refused after reserving), to see it neither shows nor holds.
	p := catPending{ID: "x", Job: "j", RunID: "r3", Token: l.Token, CommitKey: "jobs/j/commits/none.json"}
	err = s.updateRoot(ctx, func(root *rootObj, busy map[string]bool) error {
		a, err := s.compute(ctx, root, busy, catalog.Changes{Tables: []catalog.TableChange{{Table: table("sales", "orders", "s3://lake/r3/"), Base: 1}}})
		p.Apply = a
		root.Pending = append(root.Pending, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Table(ctx, "sales", "orders", 0); got.Location != "s3://lake/r1/" {
		t.Errorf("table with a fenced commit's change reserved = at %s, want s3://lake/r1/", got.Location)
	}
	l = l2
	if err := commit("r4", 1, 1); err != nil {
		t.Fatalf("commit after a fenced one reserved the table: %v", err)
	}
	if got, _ := s.Table(ctx, "sales", "orders", 0); got.Version != 2 || got.Location != "s3://lake/r4/" {
		t.Errorf("table after r4 = version %d at %s, want 2 at s3://lake/r4/", got.Version, got.Location)
	}
	if got := days(t, s, "orders"); !slices.Equal(got, []string{"r1", "r4"}) {
		t.Errorf("partitions = %v, want [r1 r4]", got)
	}
}
