package iceberg_test

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceberg "github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	"github.com/tidemark-etl/tidemark/internal/icecatalog"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
	_ "github.com/tidemark-etl/tidemark/source/iceberg"
	"github.com/tidemark-etl/tidemark/source/sourcetest"
	"github.com/tidemark-etl/tidemark/store"
)

// TestSuite runs the source suite on a table in the state store's own
// catalog, with the state in SQLite and in PostgreSQL (the stores that
// hold a catalog). The suite's Remove is a snapshot that deletes the last
// Add's file, which the suite's block skips (on_rewrite: ignore); the
// other policies have tests of their own.
func TestSuite(t *testing.T) {
	var stores []sinktest.Store
	for _, s := range sinktest.Stores(t, nil) {
		if s.Name == "sqlite" || s.Name == "postgres" {
			stores = append(stores, s)
		}
	}
	n := 0
	sourcetest.Run(t, sourcetest.Kind{Engine: openDuckDB, NewIn: func(t *testing.T, st store.Store) sourcetest.Input {
		n++
		tb := newTable(t, st, fmt.Sprintf("db.t%d", n))
		var last iceberg.DataFile
		block := func(name string) func(ctx string) string {
			return func(ctx string) string {
				return fmt.Sprintf("  - ctx: %s\n    iceberg: {table: %s}\n    on_rewrite: ignore", ctx, name)
			}
		}
		return sourcetest.Input{
			Block:   block(tb.name),
			Changed: block(tb.name + "_other"),
			Add:     func(t *testing.T, rows ...string) { last = tb.appendRows(t, rows...) },
			Modify:  func(t *testing.T, rows ...string) { last = tb.appendRows(t, rows...) },
			Remove:  func(t *testing.T) { tb.deleteFile(t, last) },
			Snapshot: func(t *testing.T) string {
				tbl := tb.load(t)
				s := tbl.MetadataLocation()
				if c := tbl.CurrentSnapshot(); c != nil {
					s += " " + strconv.FormatInt(c.SnapshotID, 10)
				}
				return s
			},
		}
	}}, stores)
}

func openDuckDB(t *testing.T) engine.Engine {
	t.Helper()
	e, err := duckdb.New(duckdb.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// testTable is an Iceberg table of columns id (long) and v (string) in a
// state store's own catalog, written through iceberg-go as another tool
// would.
type testTable struct {
	name  string
	ident table.Identifier
	cat   *icecatalog.Catalog
}

func newTable(t *testing.T, st store.Store, name string) *testTable {
	t.Helper()
	id, err := st.Identity(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cat, err := icecatalog.Open(t.Context(), id.Location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	ns, tn, _ := strings.Cut(name, ".")
	if err := cat.CreateNamespace(t.Context(), table.Identifier{ns}, nil); err != nil && !isExists(err) {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "v", Type: iceberg.PrimitiveTypes.String})
	loc := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(t.TempDir(), tn))}).String()
	if _, err := cat.CreateTable(t.Context(), table.Identifier{ns, tn}, sc, icecat.WithLocation(loc),
		icecat.WithProperties(iceberg.Properties{"format-version": "2"})); err != nil {
		t.Fatal(err)
	}
	return &testTable{name: name, ident: table.Identifier{ns, tn}, cat: cat}
}

func isExists(err error) bool { return err != nil && strings.Contains(err.Error(), "exists") }

func (tb *testTable) load(t *testing.T) *table.Table {
	t.Helper()
	tbl, err := tb.cat.LoadTable(t.Context(), tb.ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// appendRows appends rows ("ID:V") in one snapshot of one data file and
// returns the file.
func (tb *testTable) appendRows(t *testing.T, rows ...string) iceberg.DataFile {
	t.Helper()
	tbl := tb.load(t)
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	for _, r := range rows {
		vals := strings.Split(r, ":") // ID:V, and the values of columns added since
		n, err := strconv.ParseInt(vals[0], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		b.Field(0).(*array.Int64Builder).Append(n)
		for i := 1; i < len(as.Fields()); i++ {
			if i < len(vals) {
				b.Field(i).(*array.StringBuilder).Append(vals[i])
			} else {
				b.Field(i).AppendNull()
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	at := array.NewTableFromRecords(as, []arrow.RecordBatch{rec})
	defer at.Release()
	after, err := tbl.AppendTable(t.Context(), at, 1024, nil)
	if err != nil {
		t.Fatalf("appending %q to %s: %v", rows, tb.name, err)
	}
	files := addedFiles(t, after)
	if len(files) != 1 {
		t.Fatalf("the append wrote %d files, want 1", len(files))
	}
	return files[0]
}

// addedFiles are the data files the current snapshot added.
func addedFiles(t *testing.T, tbl *table.Table) []iceberg.DataFile {
	t.Helper()
	fs, err := tbl.FS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.CurrentSnapshot()
	mans, err := s.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var out []iceberg.DataFile
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == s.SnapshotID {
				out = append(out, e.DataFile())
			}
		}
	}
	return out
}

// deleteFile commits a snapshot that removes f from the table.
func (tb *testTable) deleteFile(t *testing.T, f iceberg.DataFile) {
	t.Helper()
	tx := tb.load(t).NewTransaction()
	if err := tx.ReplaceDataFilesWithDataFiles(t.Context(), []iceberg.DataFile{f}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
}
