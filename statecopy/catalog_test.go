package statecopy_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/statecopy"
	"github.com/tidemark-etl/tidemark/store/sqlite"
)

// TestCopyCatalogTwice: a job-by-job migration copies the catalog each
// time. A table the first copy brought gains, on the second, the
// partitions registered in the source since; a table the destination
// changed itself is kept as it is.
func TestCopyCatalogTwice(t *testing.T) {
	ctx := t.Context()
	open := func(name string) *sqlite.Store {
		t.Helper()
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	from, to := open("from.db"), open("to.db")
	table := catalog.Table{Database: "db", Name: "t", Location: "/data/t", Format: "parquet",
		Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}}, PartitionKeys: []catalog.Column{{Name: "p", Type: "VARCHAR"}}}
	part := func(v string) catalog.Partition {
		return catalog.Partition{Database: "db", Table: "t", Values: []string{v}, Location: "/data/t/p=" + v + "/"}
	}
	apply := func(st catalog.Store, c catalog.Changes) {
		t.Helper()
		if err := st.ApplyCatalog(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	values := func(st catalog.Store) []string {
		t.Helper()
		var out []string
		for p, err := range st.Partitions(ctx, "db", "t") {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p.Values[0])
		}
		return out
	}
	copyOnce := func() statecopy.CatalogSummary {
		t.Helper()
		sum, err := statecopy.CopyCatalog(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}

	apply(from, catalog.Changes{Databases: []catalog.Database{{Name: "db"}}, Tables: []catalog.TableChange{{Table: table}},
		Partitions: []catalog.Partition{part("a")}})
	if sum := copyOnce(); sum.Tables != 1 || sum.Partitions != 1 || len(sum.Kept) != 0 {
		t.Errorf("first copy: got %+v, want 1 table, 1 partition", sum)
	}
	apply(from, catalog.Changes{Partitions: []catalog.Partition{part("b")}})
	if sum := copyOnce(); sum.Tables != 0 || sum.Partitions != 1 || len(sum.Kept) != 0 {
		t.Errorf("second copy: got %+v, want the one new partition", sum)
	}
	if got, want := values(to), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("destination's partitions after the second copy: got %v, want %v", got, want)
	}

	wider := table
	wider.Columns = append(slices.Clone(table.Columns), catalog.Column{Name: "x", Type: "VARCHAR"})
	apply(to, catalog.Changes{Tables: []catalog.TableChange{{Table: wider, Base: 1}}})
	apply(from, catalog.Changes{Partitions: []catalog.Partition{part("c")}})
	if sum := copyOnce(); !slices.Equal(sum.Kept, []string{"db.t"}) || sum.Partitions != 0 {
		t.Errorf("copy onto a table the destination changed: got %+v, want it kept", sum)
	}
	if got, want := values(to), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("destination's partitions after a copy onto its own version: got %v, want %v", got, want)
	}
}
