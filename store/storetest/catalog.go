package storetest

// The catalog cases: databases, table versions with their compare-and-swap,
// drops, partitions, a run's commit carrying catalog changes, and writers
// racing on one table.

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store"
)

// catalogTests are run by Run for every store.
var catalogTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store)
}{
	{"CatalogDatabases", testCatalogDatabases},
	{"CatalogTableVersions", testCatalogTableVersions},
	{"CatalogAllOrNothing", testCatalogAllOrNothing},
	{"CatalogDrop", testCatalogDrop},
	{"CatalogPartitions", testCatalogPartitions},
	{"CatalogPartitionErrors", testCatalogPartitionErrors},
	{"CatalogInCommit", testCatalogInCommit},
	{"CatalogCommitRefused", testCatalogCommitRefused},
	{"CatalogRace", testCatalogRace},
}

const catDB = "sales_db"

// ordersTable returns a version of sales_db.orders with every field set;
// n varies the location and the columns.
func ordersTable(n int) catalog.Table {
	return catalog.Table{
		Database:    catDB,
		Name:        "orders",
		Location:    fmt.Sprintf("s3://in/sales-%d/", n),
		Format:      "csv",
		Compression: "gzip",
		Options:     map[string]string{"header": "true", "delimiter": "|"},
		Columns: []catalog.Column{
			{Name: "order_id", Type: "BIGINT"},
			{Name: "amount", Type: "DECIMAL(18,2)"},
			{Name: "meta", Type: "STRUCT<a: INTEGER, b: VARCHAR[]>"},
			{Name: fmt.Sprintf("c%d", n), Type: "VARCHAR"},
		},
		PartitionKeys: []catalog.Column{{Name: "year", Type: "VARCHAR"}, {Name: "product", Type: "VARCHAR"}},
		Parameters:    map[string]string{"classification": "csv", "run": fmt.Sprint(n)},
	}
}

// create is the change that makes t, which must not exist yet.
func create(t catalog.Table) catalog.Changes {
	return catalog.Changes{
		Databases: []catalog.Database{{Name: t.Database}},
		Tables:    []catalog.TableChange{{Table: t}},
	}
}

// apply applies c or fails the test.
func apply(t *testing.T, s store.Store, c catalog.Changes) {
	t.Helper()
	if err := s.ApplyCatalog(t.Context(), c); err != nil {
		t.Fatalf("ApplyCatalog: %v", err)
	}
}

// getTable reads one version of a table or fails the test.
func getTable(t *testing.T, s store.Store, db, name string, version int64) catalog.Table {
	t.Helper()
	tbl, err := s.Table(t.Context(), db, name, version)
	if err != nil {
		t.Fatalf("Table(%s.%s, %d): %v", db, name, version, err)
	}
	return tbl
}

// wantTable fails the test unless got is want at version, stamped by the
// store (UpdatedAt set) and otherwise as written (empty and nil equal).
func wantTable(t *testing.T, what string, got, want catalog.Table, version int64) {
	t.Helper()
	if got.UpdatedAt.IsZero() {
		t.Errorf("%s: UpdatedAt is zero, want the store's time", what)
	}
	want.Version = version
	if g, w := normTable(got), normTable(want); !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, g, w)
	}
}

// normTable drops the store's stamp and makes empty maps and slices nil.
func normTable(t catalog.Table) catalog.Table { return catalog.Normalized(t) }

// versionsOf lists the versions of a table's versions, as read.
func versionsOf(t *testing.T, s store.Store, db, name string) []int64 {
	t.Helper()
	vs, err := s.TableVersions(t.Context(), db, name)
	if err != nil {
		t.Fatalf("TableVersions(%s.%s): %v", db, name, err)
	}
	var out []int64
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}

// partitionsOf lists a table's partitions as "values@location".
func partitionsOf(t *testing.T, s store.Store, db, name string) []string {
	t.Helper()
	var out []string
	for _, p := range collect(t, s.Partitions(t.Context(), db, name)) {
		if p.Database != db || p.Table != name {
			t.Errorf("partition of %s.%s names %s.%s", db, name, p.Database, p.Table)
		}
		if p.UpdatedAt.IsZero() {
			t.Errorf("partition %q of %s.%s: UpdatedAt is zero", p.Values, db, name)
		}
		s := fmt.Sprintf("%q@%s", p.Values, p.Location)
		if p.Deprecated {
			s += " deprecated"
		}
		out = append(out, s)
	}
	return out
}

// wantStrings fails the test unless got equals want (nil and empty equal).
func wantStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// part is a partition of sales_db.orders.
func part(location string, values ...string) catalog.Partition {
	return catalog.Partition{Database: catDB, Table: "orders", Values: values, Location: location}
}

func testCatalogDatabases(t *testing.T, s store.Store) {
	ctx := t.Context()
	dbs, err := s.Databases(ctx)
	if err != nil || len(dbs) != 0 {
		t.Fatalf("Databases of a new store = %v, %v; want none", dbs, err)
	}
	before := time.Now()
	apply(t, s, catalog.Changes{Databases: []catalog.Database{
		{Name: "web_db", Description: "clicks"},
		{Name: catDB, Description: "sales"},
	}})
	// An existing database is left as it is.
	apply(t, s, catalog.Changes{Databases: []catalog.Database{{Name: catDB, Description: "changed"}}})
	dbs, err = s.Databases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range dbs {
		got = append(got, d.Name+":"+d.Description)
		if !near(d.CreatedAt, before, time.Minute) {
			t.Errorf("database %s: CreatedAt = %s, want about %s", d.Name, d.CreatedAt, before)
		}
	}
	wantStrings(t, "Databases", got, []string{"sales_db:sales", "web_db:clicks"})

	tables, err := s.Tables(ctx, "no_db")
	if err != nil || len(tables) != 0 {
		t.Errorf("Tables of an unknown database = %v, %v; want none", tables, err)
	}
	tables, err = s.Tables(ctx, catDB)
	if err != nil || len(tables) != 0 {
		t.Errorf("Tables of an empty database = %v, %v; want none", tables, err)
	}

	// A database given with its creation time keeps it.
	at := t0.Add(time.Hour)
	apply(t, s, catalog.Changes{Databases: []catalog.Database{{Name: "old_db", CreatedAt: at}}})
	dbs, _ = s.Databases(ctx)
	if len(dbs) != 3 || dbs[0].Name != "old_db" || !dbs[0].CreatedAt.Equal(at) {
		t.Errorf("Databases after adding old_db = %+v, want old_db first, created %s", dbs, at)
	}
}

func testCatalogTableVersions(t *testing.T, s store.Store) {
	ctx := t.Context()
	v1 := ordersTable(1)
	v1.Version = 42 // ignored: the store writes Base+1
	apply(t, s, create(v1))
	wantTable(t, "current table after create", getTable(t, s, catDB, "orders", 0), v1, 1)
	wantTable(t, "version 1", getTable(t, s, catDB, "orders", 1), v1, 1)

	// Base 0 on an existing table is a conflict.
	err := s.ApplyCatalog(ctx, create(ordersTable(2)))
	wantErr(t, "creating a table that exists", err, catalog.ErrConflict)

	v2 := ordersTable(2)
	apply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: v2, Base: 1}}})
	// A change made against version 1 is now stale.
	err = s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: ordersTable(3), Base: 1}}})
	wantErr(t, "a change on a stale base", err, catalog.ErrConflict)

	wantTable(t, "current table", getTable(t, s, catDB, "orders", 0), v2, 2)
	wantTable(t, "version 1 after version 2", getTable(t, s, catDB, "orders", 1), v1, 1)
	wantTable(t, "version 2", getTable(t, s, catDB, "orders", 2), v2, 2)
	if got, want := versionsOf(t, s, catDB, "orders"), []int64{2, 1}; !slices.Equal(got, want) {
		t.Errorf("TableVersions = %v, want %v", got, want)
	}
	vs, _ := s.TableVersions(ctx, catDB, "orders")
	if len(vs) == 2 {
		wantTable(t, "TableVersions[1]", vs[1], v1, 1)
	}

	_, err = s.Table(ctx, catDB, "orders", 3)
	wantErr(t, "Table of a version not written", err, catalog.ErrNotFound)
	_, err = s.Table(ctx, catDB, "nope", 0)
	wantErr(t, "Table of an unknown table", err, catalog.ErrNotFound)
	_, err = s.Table(ctx, "no_db", "orders", 0)
	wantErr(t, "Table of an unknown database", err, catalog.ErrNotFound)
	if got := versionsOf(t, s, catDB, "nope"); len(got) != 0 {
		t.Errorf("TableVersions of an unknown table = %v, want none", got)
	}

	// Two changes of one table in one Changes: the second on the first's
	// version. And a second table, listed by name.
	v3, v4 := ordersTable(3), ordersTable(4)
	aaa := ordersTable(5)
	aaa.Name, aaa.Options, aaa.Parameters, aaa.PartitionKeys, aaa.Compression = "aaa", nil, nil, nil, ""
	apply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: v3, Base: 2}, {Table: v4, Base: 3}, {Table: aaa}}})
	wantTable(t, "current table after two changes", getTable(t, s, catDB, "orders", 0), v4, 4)
	tables, err := s.Tables(ctx, catDB)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 2 {
		t.Fatalf("Tables = %d tables, want 2", len(tables))
	}
	wantTable(t, "Tables[0]", tables[0], aaa, 1)
	wantTable(t, "Tables[1]", tables[1], v4, 4)

	// A table in a database that does not exist.
	lost := ordersTable(1)
	lost.Database = "no_db"
	err = s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: lost}}})
	wantErr(t, "a table in an unknown database", err, catalog.ErrNotFound)
	if dbs, _ := s.Databases(ctx); len(dbs) != 1 {
		t.Errorf("Databases after a refused table = %+v, want sales_db only", dbs)
	}

	// A change Check refuses is refused by the store.
	bad := ordersTable(1)
	bad.Name = ""
	if err := s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: bad}}}); err == nil {
		t.Error("ApplyCatalog of a table without a name succeeded")
	}
}

// testCatalogAllOrNothing: a change refused halfway leaves nothing of the
// changes before it.
func testCatalogAllOrNothing(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, s, create(ordersTable(1)))
	other := ordersTable(9)
	other.Name = "customers"
	err := s.ApplyCatalog(ctx, catalog.Changes{
		Databases:  []catalog.Database{{Name: "new_db"}},
		Tables:     []catalog.TableChange{{Table: other}, {Table: ordersTable(2), Base: 1}, {Table: ordersTable(3), Base: 1}},
		Partitions: []catalog.Partition{part("s3://in/sales-1/year=2026/product=a/", "2026", "a")},
	})
	wantErr(t, "changes with one stale base", err, catalog.ErrConflict)
	wantTable(t, "table after refused changes", getTable(t, s, catDB, "orders", 0), ordersTable(1), 1)
	if _, err := s.Table(ctx, catDB, "customers", 0); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("Table(customers) after refused changes: %v, want ErrNotFound", err)
	}
	if dbs, _ := s.Databases(ctx); len(dbs) != 1 {
		t.Errorf("Databases after refused changes = %+v, want sales_db only", dbs)
	}
	wantStrings(t, "Partitions after refused changes", partitionsOf(t, s, catDB, "orders"), nil)

	// A partition of a missing table refuses the tables before it too.
	err = s.ApplyCatalog(ctx, catalog.Changes{
		Tables: []catalog.TableChange{{Table: ordersTable(2), Base: 1}},
		Partitions: []catalog.Partition{{Database: catDB, Table: "nope", Values: []string{"x"}, Location: "s3://x/"},
			part("s3://in/sales-1/year=2026/product=a/", "2026", "a")},
	})
	wantErr(t, "a partition of a missing table", err, catalog.ErrNotFound)
	if got := versionsOf(t, s, catDB, "orders"); !slices.Equal(got, []int64{1}) {
		t.Errorf("TableVersions after refused changes = %v, want [1]", got)
	}
	wantStrings(t, "Partitions after refused changes", partitionsOf(t, s, catDB, "orders"), nil)
}

func testCatalogDrop(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, s, create(ordersTable(1)))
	apply(t, s, catalog.Changes{
		Tables:     []catalog.TableChange{{Table: ordersTable(2), Base: 1}},
		Partitions: []catalog.Partition{part("s3://in/a/", "2026", "a")},
	})
	keep := ordersTable(7)
	keep.Name = "keep"
	keep.PartitionKeys = []catalog.Column{{Name: "year", Type: "VARCHAR"}, {Name: "product", Type: "VARCHAR"}}
	apply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: keep}},
		Partitions: []catalog.Partition{{Database: catDB, Table: "keep", Values: []string{"2026", "a"}, Location: "s3://k/"}}})

	drop := catalog.TableChange{Table: catalog.Table{Database: catDB, Name: "orders"}, Base: 1, Drop: true}
	err := s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{drop}})
	wantErr(t, "dropping on a stale base", err, catalog.ErrConflict)
	wantTable(t, "table after a refused drop", getTable(t, s, catDB, "orders", 0), ordersTable(2), 2)

	drop.Base = 2
	apply(t, s, catalog.Changes{Tables: []catalog.TableChange{drop}})
	_, err = s.Table(ctx, catDB, "orders", 0)
	wantErr(t, "Table after drop", err, catalog.ErrNotFound)
	_, err = s.Table(ctx, catDB, "orders", 1)
	wantErr(t, "Table version 1 after drop", err, catalog.ErrNotFound)
	if got := versionsOf(t, s, catDB, "orders"); len(got) != 0 {
		t.Errorf("TableVersions after drop = %v, want none", got)
	}
	wantStrings(t, "Partitions after drop", partitionsOf(t, s, catDB, "orders"), nil)
	wantStrings(t, "Partitions of another table after drop", partitionsOf(t, s, catDB, "keep"), []string{`["2026" "a"]@s3://k/`})
	if tables, _ := s.Tables(ctx, catDB); len(tables) != 1 || tables[0].Name != "keep" {
		t.Errorf("Tables after drop = %+v, want keep only", tables)
	}

	err = s.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{drop}})
	wantErr(t, "dropping a dropped table", err, catalog.ErrNotFound)

	// Made again, it starts at version 1, without the old partitions.
	apply(t, s, create(ordersTable(3)))
	wantTable(t, "table made again", getTable(t, s, catDB, "orders", 0), ordersTable(3), 1)
	wantStrings(t, "Partitions of the table made again", partitionsOf(t, s, catDB, "orders"), nil)
}

func testCatalogPartitions(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, s, create(ordersTable(1)))
	apply(t, s, catalog.Changes{Partitions: []catalog.Partition{
		part("s3://in/2026/b/", "2026", "b"),
		part("s3://in/2025/z/", "2025", "z"),
		part("s3://in/2026/ab/", "2026", "ab"),
		part("s3://in/2026/a/", "2026", "a"),
		part("s3://in/2026/B/", "2026", "B"),
		part("s3://in/20260/a/", "20260", "a"),
		part("s3://in/2026/é/", "2026", "é"),
	}})
	want := []string{
		`["2025" "z"]@s3://in/2025/z/`,
		`["2026" "B"]@s3://in/2026/B/`,
		`["2026" "a"]@s3://in/2026/a/`,
		`["2026" "ab"]@s3://in/2026/ab/`,
		`["2026" "b"]@s3://in/2026/b/`,
		`["2026" "é"]@s3://in/2026/é/`,
		`["20260" "a"]@s3://in/20260/a/`,
	}
	wantStrings(t, "Partitions in values order", partitionsOf(t, s, catDB, "orders"), want)

	// Adding the same partitions again changes nothing; one with the same
	// values and another location replaces it.
	apply(t, s, catalog.Changes{Partitions: []catalog.Partition{part("s3://in/2026/a/", "2026", "a")}})
	moved := part("s3://in/moved/", "2026", "b")
	moved.Deprecated = true
	apply(t, s, catalog.Changes{Partitions: []catalog.Partition{moved}})
	want[4] = `["2026" "b"]@s3://in/moved/ deprecated`
	wantStrings(t, "Partitions after an upsert", partitionsOf(t, s, catDB, "orders"), want)

	// A new table version keeps the partitions.
	apply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: ordersTable(2), Base: 1}}})
	wantStrings(t, "Partitions after a new table version", partitionsOf(t, s, catDB, "orders"), want)

	// Dropping: a missing partition is not an error; added and dropped in
	// one Changes, a partition is gone.
	apply(t, s, catalog.Changes{
		Partitions: []catalog.Partition{part("s3://in/2027/a/", "2027", "a")},
		DropPartitions: []catalog.PartitionRef{
			{Database: catDB, Table: "orders", Values: []string{"2026", "ab"}},
			{Database: catDB, Table: "orders", Values: []string{"1999", "x"}},
			{Database: catDB, Table: "orders", Values: []string{"2027", "a"}},
			{Database: catDB, Table: "nope", Values: []string{"x"}},
		},
	})
	want = slices.Delete(want, 3, 4)
	wantStrings(t, "Partitions after drops", partitionsOf(t, s, catDB, "orders"), want)

	// Partitions of an unknown table: none.
	wantStrings(t, "Partitions of an unknown table", partitionsOf(t, s, catDB, "nope"), nil)

	// Breaking out of the loop ends the read.
	n := 0
	for _, err := range s.Partitions(ctx, catDB, "orders") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Errorf("partitions read before break = %d, want 1", n)
	}

	// Many partitions stream in order.
	var many []catalog.Partition
	var wantMany []string
	for i := range 500 {
		v := fmt.Sprint(i * 7919 % 500)
		many = append(many, part("s3://in/m/"+v+"/", "m", v))
	}
	for _, p := range many {
		wantMany = append(wantMany, fmt.Sprintf("%q@%s", p.Values, p.Location))
	}
	slices.Sort(wantMany)
	apply(t, s, catalog.Changes{Partitions: many})
	var gotMany []string
	for _, p := range partitionsOf(t, s, catDB, "orders") {
		if p[:5] == `["m" ` {
			gotMany = append(gotMany, p)
		}
	}
	wantStrings(t, "500 partitions", gotMany, wantMany)
}

func testCatalogPartitionErrors(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, s, create(ordersTable(1)))
	for _, tc := range []struct {
		name string
		p    catalog.Partition
		is   error
	}{
		{"too few values", part("s3://x/", "2026"), nil},
		{"too many values", part("s3://x/", "2026", "a", "b"), nil},
		{"no location", part("", "2026", "a"), nil},
		{"unknown table", catalog.Partition{Database: catDB, Table: "nope", Values: []string{"a"}, Location: "s3://x/"}, catalog.ErrNotFound},
		{"unknown database", catalog.Partition{Database: "no_db", Table: "orders", Values: []string{"2026", "a"}, Location: "s3://x/"}, catalog.ErrNotFound},
	} {
		err := s.ApplyCatalog(ctx, catalog.Changes{Partitions: []catalog.Partition{part("s3://ok/", "2026", "ok"), tc.p}})
		switch {
		case err == nil:
			t.Errorf("%s: ApplyCatalog succeeded, want an error", tc.name)
		case tc.is != nil && !errors.Is(err, tc.is):
			t.Errorf("%s: ApplyCatalog: %v, want %v", tc.name, err, tc.is)
		}
	}
	wantStrings(t, "Partitions after refused changes", partitionsOf(t, s, catDB, "orders"), nil)

	// An unpartitioned table has no partitions.
	flat := ordersTable(2)
	flat.Name, flat.PartitionKeys = "flat", nil
	apply(t, s, catalog.Changes{Tables: []catalog.TableChange{{Table: flat}}})
	err := s.ApplyCatalog(ctx, catalog.Changes{Partitions: []catalog.Partition{{Database: catDB, Table: "flat", Values: []string{"x"}, Location: "s3://x/"}}})
	if err == nil {
		t.Error("a partition of an unpartitioned table was added")
	}
}

// catalogCommit is run id's commit under l at base, registering sales_db.orders
// version base+1 with one partition per run.
func catalogCommit(t *testing.T, s store.Store, l store.Lease, id string, base, tableBase int64) store.Commit {
	t.Helper()
	c := commitOf(t, s, l, id, bookmark.ModeEnable, base)
	c.Sources = map[string]bookmark.SourceState{src: state(id, 1)}
	c.Added = recs(src, file(id+".csv", 1))
	c.Catalog = catalog.Changes{
		Databases:  []catalog.Database{{Name: catDB}},
		Tables:     []catalog.TableChange{{Table: ordersTable(int(tableBase + 1)), Base: tableBase}},
		Partitions: []catalog.Partition{part("s3://out/"+id+"/", "2026", id)},
	}
	return c
}

func testCatalogInCommit(t *testing.T, s store.Store) {
	l := acquire(t, s, job, "r1")
	mustCommit(t, s, catalogCommit(t, s, l, "r1", 0, 0))
	wantTable(t, "table registered by commit r1", getTable(t, s, catDB, "orders", 0), ordersTable(1), 1)
	wantStrings(t, "Partitions after r1", partitionsOf(t, s, catDB, "orders"), []string{`["2026" "r1"]@s3://out/r1/`})

	// A commit without Advance (pause, disable) may carry catalog changes.
	c := commitOf(t, s, l, "r2", bookmark.ModeDisable, 0)
	c.Catalog = catalog.Changes{Partitions: []catalog.Partition{part("s3://out/r2/", "2026", "r2")}}
	mustCommit(t, s, c)
	wantStrings(t, "Partitions after r2", partitionsOf(t, s, catDB, "orders"),
		[]string{`["2026" "r1"]@s3://out/r1/`, `["2026" "r2"]@s3://out/r2/`})

	c = catalogCommit(t, s, l, "r3", 1, 1)
	c.Catalog.DropPartitions = []catalog.PartitionRef{{Database: catDB, Table: "orders", Values: []string{"2026", "r1"}}}
	mustCommit(t, s, c)
	wantTable(t, "table after r3", getTable(t, s, catDB, "orders", 0), ordersTable(2), 2)
	wantStrings(t, "Partitions after r3", partitionsOf(t, s, catDB, "orders"),
		[]string{`["2026" "r2"]@s3://out/r2/`, `["2026" "r3"]@s3://out/r3/`})
}

// testCatalogCommitRefused: a commit refused for its lease, its bookmark
// base or its catalog changes applies none of them.
func testCatalogCommitRefused(t *testing.T, s store.Store) {
	ctx := t.Context()
	l := acquire(t, s, job, "r1")
	apply(t, s, create(ordersTable(1)))

	// A stale catalog base refuses the whole commit.
	c := catalogCommit(t, s, l, "r1", 0, 0)
	_, err := s.Commit(ctx, c)
	wantErr(t, "Commit with a stale table base", err, catalog.ErrConflict)
	wantNothingCommitted(t, s, "r1")
	wantStrings(t, "Partitions after a refused commit", partitionsOf(t, s, catDB, "orders"), nil)

	// A stale bookmark base.
	mustCommit(t, s, catalogCommit(t, s, l, "r2", 0, 1))
	c = catalogCommit(t, s, l, "r3", 0, 2)
	_, err = s.Commit(ctx, c)
	wantErr(t, "Commit on a stale bookmark base", err, store.ErrVersionConflict)
	wantTable(t, "table after a conflicting commit", getTable(t, s, catDB, "orders", 0), ordersTable(2), 2)

	// A lost lease.
	if err := s.BreakLease(ctx, job, l.Token); err != nil {
		t.Fatal(err)
	}
	l2 := acquire(t, s, job, "r4")
	c = catalogCommit(t, s, l2, "r4", 1, 2)
	c.Token = l.Token
	_, err = s.Commit(ctx, c)
	wantErr(t, "Commit with a lost lease", err, store.ErrLeaseLost)
	wantTable(t, "table after a fenced commit", getTable(t, s, catDB, "orders", 0), ordersTable(2), 2)
	wantStrings(t, "Partitions after refused commits", partitionsOf(t, s, catDB, "orders"), []string{`["2026" "r2"]@s3://out/r2/`})
	wantHead(t, s, job, 1, "r2")
}

// testCatalogRace: writers racing to make, then to change, one table:
// exactly one wins each round, the others get ErrConflict.
func testCatalogRace(t *testing.T, s store.Store) {
	const writers = 6
	apply(t, s, catalog.Changes{Databases: []catalog.Database{{Name: catDB}}})
	for round := range int64(3) {
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				errs[i] = s.ApplyCatalog(t.Context(), catalog.Changes{
					Tables:     []catalog.TableChange{{Table: ordersTable(int(round)*100 + i), Base: round}},
					Partitions: []catalog.Partition{part(fmt.Sprintf("s3://w%d/", i), "2026", fmt.Sprint(round))},
				})
			})
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Errorf("round %d: writers %d and %d both changed the table on base %d", round, winner, i, round)
			case err == nil:
				winner = i
			case !errors.Is(err, catalog.ErrConflict):
				t.Errorf("round %d: writer %d: %v, want nil or ErrConflict", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		wantTable(t, fmt.Sprintf("table after round %d", round), getTable(t, s, catDB, "orders", 0), ordersTable(int(round)*100+winner), round+1)
		locs := map[string]string{}
		for _, p := range collect(t, s.Partitions(t.Context(), catDB, "orders")) {
			locs[p.Values[1]] = p.Location
		}
		if got, want := locs[fmt.Sprint(round)], fmt.Sprintf("s3://w%d/", winner); got != want {
			t.Errorf("round %d: partition location %q, want the winner's %q (partitions %v)", round, got, want, slices.Sorted(maps.Keys(locs)))
		}
	}
}
