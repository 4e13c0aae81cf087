package duckdb

import "github.com/tidemark-etl/tidemark/engine"

func init() {
	engine.Register(engine.Kind{
		Name:    "duckdb",
		Noun:    "the DuckDB engine",
		Options: func() engine.Options { return &Options{} },
		Open: func(o engine.Options, env engine.Env) (engine.Engine, error) {
			opts := *o.(*Options)
			opts.Progress = env.Progress
			return New(opts)
		},
		SourceOptions: ValidateSourceOptions,
		SinkOptions:   ValidateSinkOptions,
	})
}
