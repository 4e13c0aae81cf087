package duckdb

import "github.com/tidemark-etl/tidemark/engine"

func init() {
	engine.Register("duckdb", func(opts engine.Options) (engine.Engine, error) { return New(opts) })
	engine.RegisterOptions("duckdb", engine.OptionChecker{Source: ValidateSourceOptions, Sink: ValidateSinkOptions})
}
