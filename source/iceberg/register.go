package iceberg

import (
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// The kind is registered here, once: its block, its opener and the
// decoders of its records' details (details.go).
func init() {
	source.Register(source.Kind{Name: Name, Marker: "iceberg", Noun: "Iceberg table sources (iceberg:)",
		Records: Kind, Count: bookmark.DecodeAs[CountDetail](), State: bookmark.DecodeAs[StateDetail](),
		Config: func() job.Config { return new(Config) },
		Open:   open})
}
