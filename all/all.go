// Package all links the implementations that ship with tidemark: import it
// for its side effects, and each engine, object store, source and sink
// kind and state store registers itself. The root package, the CLI and
// glue import it; a program that wants fewer kinds imports only those.
package all

import (
	_ "github.com/tidemark-etl/tidemark/engine/duckdb"
	_ "github.com/tidemark-etl/tidemark/engine/spark"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	_ "github.com/tidemark-etl/tidemark/objstore/s3"
	_ "github.com/tidemark-etl/tidemark/sink/files"
	_ "github.com/tidemark-etl/tidemark/sink/iceberg"
	_ "github.com/tidemark-etl/tidemark/sink/sqltable"
	_ "github.com/tidemark-etl/tidemark/source/files"
	_ "github.com/tidemark-etl/tidemark/source/iceberg"
	_ "github.com/tidemark-etl/tidemark/source/sqltable"
	_ "github.com/tidemark-etl/tidemark/store/postgres"
	_ "github.com/tidemark-etl/tidemark/store/s3"
	_ "github.com/tidemark-etl/tidemark/store/sqlite"
)
