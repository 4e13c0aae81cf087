package memsource

import (
	"context"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// The kind's block and opener are registered here; its records' details
// in details.go.
func init() {
	job.RegisterSource(job.Kind{Name: Name, Marker: "items", Noun: "memory lists (items:)",
		New: func() job.Config { return new(Config) }})
	source.Register(Name, func(_ context.Context, _ *job.Spec, src job.Source) (source.Source, error) {
		return &Source{ctx: src.Ctx, cfg: src.Config.(*Config)}, nil
	})
}
