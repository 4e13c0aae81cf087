package duckdb

import (
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/enginetest"
)

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Config{
		New: func(t *testing.T) engine.Engine {
			e, err := New(Options{Threads: 2, SpillDir: filepath.Join(t.TempDir(), "spill")})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		SplitOptions: func(format string) map[string]any {
			if format == "parquet" {
				return map[string]any{"file_size_bytes": "200KB", "row_group_size": 5000}
			}
			return map[string]any{"file_size_bytes": "200KB"}
		},
	})
}
