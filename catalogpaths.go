package tidemark

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// checkCatalogSinks refuses a file sink inside a folder a catalog source
// reads (its table's location or any partition's), or holding one, as
// checkSinkPaths refuses one inside a path source: the job would read its
// own output back (a crawler would register the sink's folder as a
// partition), each row once more every run. It runs once the sources are
// resolved, before the run is recorded; the error is a job-file error
// (exit 2) naming the sink and the table's folder.
func checkCatalogSinks(ctx context.Context, spec *job.Spec, sources []source.Source, cat store.Store) error {
	var errs job.Errors
	for _, src := range sources {
		pl, ok := src.(source.Placer)
		if !ok {
			continue
		}
		places, s3, err := pl.Places(ctx, cat)
		if err != nil {
			continue // reading the catalog fails the recorded run, as planning would
		}
		var areas []area
		for _, p := range places {
			if a, ok := areaOf(job.Place{Folder: spec.Resolve(p.Location), S3: s3}); ok {
				a.shown = fmt.Sprintf("%s %q, which source %s reads", p.What, store.Redact(p.Location), src.Ctx())
				areas = append(areas, a)
			}
		}
		for i, k := range spec.Sinks {
			sink, ok := areaOf(placeOf(spec, k.Config))
			if !ok {
				continue
			}
			if err := sinkAgainst(spec, i, sink, areas); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// sinkAgainst is sink i's error when it lies inside one of areas (the
// first that holds it: a partition before the table's location) or holds
// one (the last: the table's location before a partition); nil if neither.
func sinkAgainst(spec *job.Spec, i int, sink area, areas []area) *job.Error {
	key := fmt.Sprintf("$.sinks[%d].path", i)
	for _, a := range areas {
		if sink.within(a) {
			return spec.ErrorAt(key, "%s lies inside %s: the job would read its own output back; "+
				"write the sink outside the table's location and its partitions' folders", sink.describe(), a.shown)
		}
	}
	for j := len(areas) - 1; j >= 0; j-- {
		if a := areas[j]; a.within(sink) {
			return spec.ErrorAt(key, "%s holds %s: the sink's output and the source's input would mix; "+
				"write the sink outside the table's location and its partitions' folders", sink.describe(), a.shown)
		}
	}
	return nil
}
