package memsource

import (
	"context"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// The kind is registered here, once: its block, its opener and the
// decoders of its records' details (details.go); each detail writes
// "kind": Kind, by which a record names the kind that decodes it.
func init() {
	source.Register(source.Kind{Name: Name, Marker: "items", Noun: "memory lists (items:)",
		Records: Kind, Count: bookmark.DecodeAs[CountDetail](), State: bookmark.DecodeAs[StateDetail](),
		Config: func() job.Config { return new(Config) },
		Open: func(_ context.Context, _ *job.Spec, src job.Source) (source.Source, error) {
			return &Source{ctx: src.Ctx, cfg: src.Config.(*Config)}, nil
		}})
}
