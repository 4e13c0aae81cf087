package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestNestedParquetColumns: Parquet inputs with list, struct and map
// columns are read run after run: the schema the first run records (with
// nested types) is applied to the next run's files, which fit it.
func TestNestedParquetColumns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{format: "parquet", transform: "-", partitionBy: "-"})
	for round := 1; round <= 3; round++ {
		path := filepath.Join(t.TempDir(), "nested.parquet")
		q := fmt.Sprintf(`COPY (SELECT %d AS id, [%[1]d, 2] AS li, {'k': %[1]d, 'Odd Name': 'z'} AS st,
			MAP {'a': %[1]d} AS mp) TO %s (FORMAT parquet)`, round, sqlString(path))
		if _, err := duck.Exec(q); err != nil {
			t.Fatalf("writing %s: %v", path, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.put(fmt.Sprintf("round%d.parquet", round), data)
		s := f.mustRun()
		assertFiles(t, fmt.Sprintf("run %d", round), s, 1)
		if got, want := s.source().Rows, int64(1); got != want {
			t.Errorf("run %d: rows = %d, want %d", round, got, want)
		}
	}
}
