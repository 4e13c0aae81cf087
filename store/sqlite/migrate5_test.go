package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
)

// TestMigrateCatalog: migration 5 gives a file an older tidemark wrote an
// empty catalog, which works like a new store's, and keeps what was there.
func TestMigrateCatalog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := legacyAt(t, path, 4)
	if _, err := db.Exec(`INSERT INTO bookmark_versions (job, version, run_id, kind, created_at) VALUES ('j', 1, 'r1', 'commit', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Read-only, the file is left at version 4 and read through a copy.
	ro, err := OpenExisting(t.Context(), path, true)
	if err != nil {
		t.Fatal(err)
	}
	if dbs, err := ro.Databases(t.Context()); err != nil || len(dbs) != 0 {
		t.Errorf("Databases of an old file opened read-only = %v, %v; want none", dbs, err)
	}
	ro.Close()

	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h, err := s.Head(t.Context(), "j"); err != nil || h.Version != 1 {
		t.Errorf("Head after migrating = %+v, %v; want version 1", h, err)
	}
	err = s.ApplyCatalog(t.Context(), catalog.Changes{
		Databases: []catalog.Database{{Name: "sales_db"}},
		Tables: []catalog.TableChange{{Table: catalog.Table{Database: "sales_db", Name: "orders", Location: "s3://in/",
			Format: "csv", PartitionKeys: []catalog.Column{{Name: "day", Type: "VARCHAR"}}}}},
		Partitions: []catalog.Partition{{Database: "sales_db", Table: "orders", Values: []string{"1"}, Location: "s3://in/day=1/"}},
	})
	if err != nil {
		t.Fatalf("ApplyCatalog after migrating: %v", err)
	}
	tbl, err := s.Table(t.Context(), "sales_db", "orders", 0)
	if err != nil || tbl.Version != 1 || tbl.Location != "s3://in/" {
		t.Errorf("Table after migrating = %+v, %v; want version 1 at s3://in/", tbl, err)
	}
}
