package spark

import "github.com/tidemark-etl/tidemark/engine"

func init() {
	engine.Register(engine.Kind{
		Name:    "spark",
		Noun:    "the Spark engine",
		Options: func() engine.Options { return &Options{} },
		Open: func(o engine.Options, _ engine.Env) (engine.Engine, error) {
			return New(*o.(*Options))
		},
		SourceOptions: ValidateSourceOptions,
		SinkOptions:   ValidateSinkOptions,
	})
}
