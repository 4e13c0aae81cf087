package spark

import "github.com/tidemark-etl/tidemark/engine"

func init() {
	engine.Register("spark", engine.Factory{
		Options: func() engine.Options { return &Options{} },
		Open: func(o engine.Options, env engine.Env) (engine.Engine, error) {
			return New(*o.(*Options))
		},
	})
	engine.RegisterOptions("spark", engine.OptionChecker{Source: ValidateSourceOptions, Sink: ValidateSinkOptions})
}
