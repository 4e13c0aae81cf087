package memsource

import (
	"context"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// The kind is registered here, once; its records' details in details.go.
func init() {
	source.Register(source.Kind{Name: Name, Marker: "items", Noun: "memory lists (items:)",
		Config: func() job.Config { return new(Config) },
		Open: func(_ context.Context, _ *job.Spec, src job.Source) (source.Source, error) {
			return &Source{ctx: src.Ctx, cfg: src.Config.(*Config)}, nil
		}})
}
