package memsink

import (
	"context"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// The kind is registered here, once.
func init() {
	sink.Register(sink.Kind{Name: Name, Marker: "log", Noun: "run logs (log:)",
		Config: func() job.Config { return new(Config) },
		Open: func(_ context.Context, spec *job.Spec, k job.Sink) (sink.Sink, error) {
			return &Sink{ctx: k.Ctx, dir: k.Config.(*Config).Place(spec).Folder}, nil
		},
		Locate: func(_ context.Context, o store.Output) (sink.Location, error) {
			return &location{dir: o.Root}, nil
		},
		Outputs: []manifest.Kind{Output}})
}
