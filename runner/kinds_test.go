package runner

// The kinds the tests' job files use register themselves.
import (
	_ "github.com/tidemark-etl/tidemark/engine/duckdb"
	_ "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/sink/sqltable"
	_ "github.com/tidemark-etl/tidemark/source/files"
	_ "github.com/tidemark-etl/tidemark/source/sqltable"
)
