package catalog_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// TestFindMissing: a table, database or version that is not there is an
// error that is ErrNotFound, says once that it is missing and names what
// is there.
func TestFindMissing(t *testing.T) {
	ctx := context.Background()
	st := memory.New(memory.Options{})
	tb := catalog.Table{Database: "db", Name: "d", Location: "/data/d", Format: "csv", Columns: []catalog.Column{{Name: "id", Type: "BIGINT"}}}
	if err := st.ApplyCatalog(ctx, catalog.Changes{Databases: []catalog.Database{{Name: "db"}}, Tables: []catalog.TableChange{{Table: tb}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		db, table string
		version   int64
		want      string
	}{
		{"db", "nope", 0, "table db.nope is not in the catalog (tables of db: d)"},
		{"nodb", "d", 0, "database nodb is not in the catalog (databases: db)"},
		{"db", "d", 7, "table db.d has no version 7 (it has versions 1 to 1)"},
	} {
		_, err := catalog.Find(ctx, st, tc.db, tc.table, tc.version)
		if !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("Find(%s.%s, %d): got %v, want ErrNotFound", tc.db, tc.table, tc.version, err)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("Find(%s.%s, %d): got %q, want %q", tc.db, tc.table, tc.version, got, tc.want)
		}
		if n := strings.Count(err.Error(), "not in the catalog"); n > 1 {
			t.Errorf("Find(%s.%s, %d): %q says %d times that it is not in the catalog", tc.db, tc.table, tc.version, err, n)
		}
	}
}
