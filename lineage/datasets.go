package lineage

import (
	"github.com/tidemark-etl/tidemark/job"
)

// dataset is one source's or sink's dataset and its dataSource facet.
type dataset struct {
	ctx, from       string // from: a sink's from: (sources: "")
	namespace, name string
	sourceName, uri string
}

// datasetOf is a source's or sink's dataset, as its kind names it
// (job.Placer: the OpenLineage naming conventions). ok is false for a
// block that names none (a SQL source reading a query).
func datasetOf(spec *job.Spec, c job.Config) (dataset, bool) {
	p, ok := c.(job.Placer)
	if !ok {
		return dataset{}, false
	}
	d := p.Place(spec).Dataset
	if d.Namespace == "" {
		return dataset{}, false
	}
	return dataset{namespace: d.Namespace, name: d.Name, sourceName: d.SourceName, uri: d.URI}, true
}

// datasets names every source and sink of spec.
func datasets(spec *job.Spec) (inputs, outputs []dataset) {
	for _, s := range spec.Sources {
		if d, ok := datasetOf(spec, s.Config); ok {
			d.ctx = s.Ctx
			inputs = append(inputs, d)
		}
	}
	for _, k := range spec.Sinks {
		if d, ok := datasetOf(spec, k.Config); ok {
			d.ctx, d.from = k.Ctx, k.From
			if d.from == "" && len(spec.Transforms) == 0 && len(spec.Sources) == 1 {
				d.from = spec.Sources[0].Ctx
			}
			outputs = append(outputs, d)
		}
	}
	return inputs, outputs
}
