package spark

import (
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/enginetest"
	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

func newEngine(t *testing.T) *Engine {
	t.Helper()
	e, err := New(Options{Remote: sparktest.Remote(t)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConformance(t *testing.T) {
	enginetest.Run(t, enginetest.Config{
		New: func(t *testing.T) engine.Engine { return newEngine(t) },
		SplitOptions: func(format string) map[string]any {
			return map[string]any{"max_records_per_file": 10000}
		},
	})
}
