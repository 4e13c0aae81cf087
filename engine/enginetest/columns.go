package enginetest

import (
	"errors"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
)

// testColumnsDiffer: under schema_evolution fail (the default, and the
// only mode an engine without Caps.SchemaEvolution reads), a later CSV or
// Parquet file with a column the schema lacks, or lacking one it has, or
// (Parquet) of another type (a DATE where the schema has BIGINT), fails
// the source naming file and column: a read that dropped the new
// column, or gave NULL for the missing one, changed data with exit 0.
func (s *suite) testColumnsDiffer(t *testing.T) {
	e := s.engine(t)
	root := t.TempDir()
	schema := []bookmark.Column{{Name: "id", Type: "BIGINT"}, {Name: "amount", Type: "BIGINT"}}
	files := map[string]map[string]engine.Input{
		"csv": {
			"mon":   input(t, root, "c/mon.csv", []byte("id,amount\n1,2\n")),
			"extra": input(t, root, "c/thu.csv", []byte("id,amount,coupon\n2,3,X\n")),
			"gone":  input(t, root, "c/sat.csv", []byte("id\n5\n")),
		},
		"parquet": {
			"mon":   s.parquetIn(t, e, "p/mon.parquet", "id,amount\n1,2\n"),
			"extra": s.parquetIn(t, e, "p/thu.parquet", "id,amount,coupon\n2,3,X\n"),
			"gone":  s.parquetIn(t, e, "p/sat.parquet", "id\n5\n"),
			"type":  s.parquetIn(t, e, "p/sun.parquet", "id,amount\n6,2026-01-02\n"),
		},
	}
	for _, format := range []string{"csv", "parquet"} {
		for _, c := range []struct{ name, file, column string }{{"extra", "thu", "coupon"}, {"gone", "sat", "amount"}, {"type", "sun", "amount"}} {
			if files[format][c.name].Key == "" {
				continue // a CSV column has no type of its own
			}
			for _, recorded := range []bool{true, false} {
				name := format + "/" + c.name + "/recorded"
				if !recorded {
					name = format + "/" + c.name + "/first_run"
				}
				t.Run(name, func(t *testing.T) {
					src := engine.Source{Ctx: "o", Format: format, Files: []engine.Input{files[format]["mon"], files[format][c.name]}}
					if recorded {
						src.Schema = schema
					}
					_, err := e.Execute(t.Context(), engine.Plan{Sources: []engine.Source{src}, Sinks: []engine.Sink{sink(t, "out", "o", "csv")}})
					var ie *engine.InputError
					if !errors.As(err, &ie) {
						t.Fatalf("got error %v, want an *engine.InputError naming %s and column %s", err, files[format][c.name].Key, c.column)
					}
					equal(t, "file", ie.File, files[format][c.name].Key)
					equal(t, "column", ie.Column, c.column)
				})
			}
		}
	}
}
