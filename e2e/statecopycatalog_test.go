package e2e

import (
	"path/filepath"
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
	f := newFixture(t, jobOpts{sinkExtra: []string{"catalog: {table: sales_db.orders_clean, update: true}"}})
	f.addCSVs("monday", 2, 10)
	f.mustRun()
	before := f.catalogShow("sales_db.orders_clean")
	if len(before.Partitions) == 0 {
		t.Fatalf("the sink registered no partitions: %+v", before)
	}
	dst := filepath.Join(t.TempDir(), "copy.db")
	if r := f.tidemark(nil, "state", "copy", "--from", f.stateFile(), "--to", dst); r.code != 0 {
		t.Fatalf("state copy: got exit %d, want 0\n%v", r.code, r)
	}
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
}
