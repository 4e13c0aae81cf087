package main

import (
	"log/slog"
	"os"
	"time"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/lineage"
)

// lineageDrain is how long a run's end waits at most for its lineage
// events to be sent.
const lineageDrain = 2 * time.Second

// startLineage returns the observer that sends spec's runs as OpenLineage
// events (nil when no endpoint is configured) and the function that
// flushes them, waiting at most lineageDrain.
func startLineage(spec *job.Spec, log *slog.Logger) (tidemark.Observer, func()) {
	cfg, ok := lineage.ConfigOf(spec, os.Getenv, log)
	if !ok {
		return nil, func() {}
	}
	c, err := lineage.NewClient(cfg, log)
	if err != nil {
		log.Warn("lineage: not sending events", "err", err)
		return nil, func() {}
	}
	obs := lineage.NewObserver(spec, c, lineage.ObserverOptions{Namespace: os.Getenv(lineage.EnvNamespace)})
	return obs, func() { c.Close(lineageDrain) }
}
