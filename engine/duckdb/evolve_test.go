package duckdb

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// readEvolved reads src into a Parquet sink and returns its rows as query
// gives them, ordered by the first column.
func readEvolved(t *testing.T, src engine.Source) ([]string, engine.SourceResult) {
	t.Helper()
	e := newEngine(t)
	dir := filepath.Join(t.TempDir(), "out")
	res := execute(t, e, engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{{Ctx: "out", From: src.Ctx, Format: "parquet", Location: dir}}})
	return query(t, "SELECT * FROM read_parquet('"+dir+"/*.parquet') ORDER BY 1"), res.Sources[src.Ctx]
}

// TestRescueFormattedColumns: a date read with a dateformat is converted
// with it, and a value that does not parse is rescued.
func TestRescueFormattedColumns(t *testing.T) {
	root := t.TempDir()
	src := engine.Source{Ctx: "s", Format: "csv", SchemaEvolution: bookmark.EvolveRescue,
		Options: map[string]any{"dateformat": "%m/%d/%Y"},
		Schema:  []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "d", Type: "DATE"}},
		Files:   []engine.Input{input(t, root, "a.csv", []byte("id,d\n1,01/02/2024\n2,x\n"))}}
	rows, _ := readEvolved(t, src)
	equal(t, "rows", rows, []string{"1|2024-01-02 00:00:00 +0000 UTC|<nil>", `2|<nil>|{"d":"x","_file":"a.csv"}`})
}
