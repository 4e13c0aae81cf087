package iceberg_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/duckdb"
	_ "github.com/tidemark-etl/tidemark/sink/iceberg"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
)

// TestSuite runs the sink suite on a table in a local folder, with the
// state (and so the table's catalog) in SQLite and in PostgreSQL: the
// state stores that can hold tidemark's own catalog (TestStateWithoutCatalog
// covers the others).
func TestSuite(t *testing.T) {
	var stores []sinktest.Store
	for _, s := range sinktest.Stores(t, nil) {
		if s.Name == "sqlite" || s.Name == "postgres" {
			stores = append(stores, s)
		}
	}
	n := 0
	sinktest.Run(t, sinktest.Kind{Engine: openDuckDB, New: func(t *testing.T) sinktest.Place {
		n++
		return folder(filepath.Join(t.TempDir(), "tbl"), fmt.Sprintf("db.t%d", n))
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

// folder is an Iceberg sink location: table name at dir.
func folder(dir, name string) sinktest.Place {
	staged := func(t *testing.T, runID string) []string {
		ents, err := os.ReadDir(filepath.Join(dir, "_tidemark", "staging", runID))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		return got
	}
	return sinktest.Place{
		Block: func(ctx, mode string) string {
			return fmt.Sprintf("  - ctx: %s\n    iceberg: {table: %s}\n    path: %s\n    mode: %s", ctx, name, dir, mode)
		},
		Rows: func(t *testing.T) []string {
			return tableRows(t, dir, "id", "v")
		},
		Staged: staged,
		Lose: func(t *testing.T, runID string) {
			if err := os.RemoveAll(filepath.Join(dir, "_tidemark", "staging", runID)); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// latestMetadata is the newest metadata file of the table at dir ("": no
// table there yet).
func latestMetadata(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "metadata", "*.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		return ""
	}
	slices.Sort(files)
	return files[len(files)-1]
}

// readTable opens the table at dir from its newest metadata file, as a
// reader without the catalog would (nil: no table there yet).
func readTable(t *testing.T, dir string) *table.Table {
	t.Helper()
	meta := latestMetadata(t, dir)
	if meta == "" {
		return nil
	}
	tbl, err := table.NewFromLocation(t.Context(), table.Identifier{"db", "t"}, meta,
		func(ctx context.Context) (io.IO, error) { return io.LocalFS{}, nil }, nil)
	if err != nil {
		t.Fatalf("opening the table at %s: %v", meta, err)
	}
	return tbl
}

// tableRows reads the table at dir through iceberg-go, each row as its
// columns' values joined by ":" (a null as "").
func tableRows(t *testing.T, dir string, cols ...string) []string {
	t.Helper()
	tbl := readTable(t, dir)
	if tbl == nil || tbl.CurrentSnapshot() == nil {
		return nil
	}
	scan := tbl.Scan(table.WithSelectedFields(cols...))
	defer scan.Close()
	at, err := scan.ToArrowTable(t.Context())
	if err != nil {
		t.Fatalf("reading the table at %s: %v", dir, err)
	}
	defer at.Release()
	var rows []string
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			var vals []string
			for c := range int(rec.NumCols()) {
				col := rec.Column(c)
				if col.IsNull(i) {
					vals = append(vals, "")
				} else {
					vals = append(vals, col.ValueStr(i))
				}
			}
			rows = append(rows, strings.Join(vals, ":"))
		}
	}
	return rows
}
