package duckdb

import "github.com/tidemark-etl/tidemark/engine"

func init() {
	engine.Register("duckdb", engine.Factory{
		Options: func() engine.Options { return &Options{} },
		Open: func(o engine.Options, env engine.Env) (engine.Engine, error) {
			opts := *o.(*Options)
			opts.Progress = env.Progress
			return New(opts)
		},
	})
	engine.RegisterOptions("duckdb", engine.OptionChecker{Source: ValidateSourceOptions, Sink: ValidateSinkOptions})
}
