package metrics

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tidemark-etl/tidemark/store"
)

// Handler serves st's metrics in the Prometheus text format (for
// /metrics). At most one Options applies (none: the defaults). Each
// request reads the store.
func Handler(st store.Store, opts ...Options) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(st, first(opts)))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// WriteFile writes the metrics of the job to path in the text format that
// the node exporter's textfile collector reads, atomically (a temporary
// file in the same folder, renamed over path).
func WriteFile(st store.Store, job, path string, opts ...Options) error {
	o := first(opts)
	o.Jobs = []string{job}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(st, o))
	if err := prometheus.WriteToTextfile(path, reg); err != nil {
		return fmt.Errorf("writing metrics file %s: %w", path, err)
	}
	return nil
}

func first(opts []Options) Options {
	if len(opts) > 0 {
		return opts[0]
	}
	return Options{}
}
