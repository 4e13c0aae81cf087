package main

import (
	"context"
	"log/slog"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/metrics"
)

// writeMetricsFile writes the job's metrics to path after a run, whatever
// its outcome (run --metrics-file), for the node exporter's textfile
// collector. A failure is a warning: it never fails the run.
func writeMetricsFile(ctx context.Context, g *globals, o *runOptions, spec *job.Spec, res *tidemark.Result, path string, log *slog.Logger) {
	if spec == nil {
		log.Warn("not writing the metrics file: the job file was not read", "path", path)
		return
	}
	name := spec.Job
	if o.jobName != "" {
		name = o.jobName
	}
	if res != nil && res.Job != "" {
		name = res.Job
	}
	st, err := tidemark.OpenExistingState(ctx, g.state, spec, true)
	if err != nil {
		log.Warn("not writing the metrics file: opening the state store", "path", path, "err", err)
		return
	}
	defer st.Close()
	if err := metrics.WriteFile(st, name, path, metrics.Options{Logger: log}); err != nil {
		log.Warn("not writing the metrics file", "err", err)
	}
}
