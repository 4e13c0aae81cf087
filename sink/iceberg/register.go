package iceberg

import (
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
)

// The kind is registered here, once.
func init() {
	sink.Register(sink.Kind{Name: Name, Marker: "iceberg", Anchor: "path", Noun: "Iceberg table sinks (iceberg:)",
		Config:  func() job.Config { return new(Config) },
		Open:    open,
		Locate:  locate,
		Outputs: []manifest.Kind{Output}})
}
