package e2e

import (
	"reflect"
	"slices"
	"testing"
)

// TestStateCopyCarriesCatalog: the catalog lives in the state store, so
// `state copy` moves it with the jobs: a table a sink registers (every
// version, every partition) reads the same from the copy, and the next run
// there adds its partitions to it. Without it the copy's table listed only
// the partitions written after the copy, and readers through the catalog
// (catalog: sources, catalog ddl) missed the rest of the sink. A table
// the destination already has is left as it is.
func TestStateCopyCarriesCatalog(t *testing.T) {
	t.Parallel()
	eachStateStore(t, testStateCopyCarriesCatalog)
}

func testStateCopyCarriesCatalog(t *testing.T, to stateStore) {
	f := newFixture(t, jobOpts{sinkExtra: []string{"catalog: {table: sales_db.orders_clean, update: true}"}})
	dst, env := to.url(t)
	f.env = append(f.env, env...)
	f.addCSVs("monday", 2, 10)
	f.mustRun()
	before := f.catalogShow("sales_db.orders_clean")
	if len(before.Partitions) == 0 {
		t.Fatalf("the sink registered no partitions: %+v", before)
	}
	f.copyState(dst)
	show := func() catalogShow {
		t.Helper()
		r := f.tidemark(nil, "catalog", "show", "sales_db.orders_clean", "--json", "--state", dst)
		if r.code != 0 {
			t.Fatalf("catalog show in the copy: got exit %d, want 0\n%v", r.code, r)
		}
		return decodeOne[catalogShow](t, r)
	}
	if got := show(); !reflect.DeepEqual(got, before) {
		t.Errorf("the copy's table differs:\ngot  %+v\nwant %+v", got, before)
	}
	f.addCSVs("tuesday", 2, 10)
	f.mustRun("--state", dst)
	if got, want := show().products(), f.sinkProducts(); !slices.Equal(got, want) {
		t.Errorf("the copy's table after a run there: partitions %v, want every product in the sink %v", got, want)
	}

	// Another copy into the same store (of a job it does not have) keeps
	// the table there as it is.
	g := f.otherJob("other")
	g.env = append(g.env, env...)
	g.writeJob(jobOpts{name: "other", sinkExtra: []string{"catalog: {table: sales_db.orders_clean, update: true}"}})
	g.addCSVs("other", 1, 5)
	g.mustRun("--adopt-sink")
	grown := show()
	r := f.tidemark(nil, "state", "copy", "--from", f.stateFile(), "--to", dst, "--job", "sales")
	if r.code != 2 {
		t.Errorf("copying sales again: got exit %d, want 2 (it has state there)\n%v", r.code, r)
	}
	r = g.tidemark(nil, "state", "copy", "--from", g.stateFile(), "--to", dst)
	if r.code != 0 {
		t.Fatalf("copying job other: got exit %d, want 0\n%v", r.code, r)
	}
	assertMentions(t, r, "left as they are: sales_db.orders_clean")
	if got := show(); !reflect.DeepEqual(got, grown) {
		t.Errorf("a second copy changed the destination's table:\ngot  %+v\nwant %+v", got, grown)
	}
}
