package spark

import (
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/engine/enginetest"
	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

func newEngine(t *testing.T) *Engine {
	t.Helper()
	return newEngineOn(t, sparktest.Remote(t))
}

// newEngineOn is an engine on the Spark Connect server at remote.
func newEngineOn(t *testing.T, remote string) *Engine {
	t.Helper()
	e, err := New(Options{Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func conformanceOn(t *testing.T, remote func(tb testing.TB) string) {
	enginetest.Run(t, enginetest.Config{
		New: func(t *testing.T) engine.Engine { return newEngineOn(t, remote(t)) },
		SplitOptions: func(format string) map[string]any {
			return map[string]any{"max_records_per_file": 10000}
		},
	})
}

// TestConformance runs the suite on the shared server (local[2]: the
// driver's JVM runs the tasks).
func TestConformance(t *testing.T) { conformanceOn(t, sparktest.Remote) }

// TestConformanceCluster runs the suite on a standalone cluster: the tasks
// run in the executors of two workers, separate JVMs that read the inputs
// and write the output files themselves.
func TestConformanceCluster(t *testing.T) {
	conformanceOn(t, sparktest.Cluster)
}
