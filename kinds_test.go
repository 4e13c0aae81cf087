package tidemark

// The kinds the tests' job files use register themselves (the fake
// engine in fakeengine_test.go): the runner's tests link neither DuckDB
// nor SQLite.
import (
	_ "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/source/files"
)
