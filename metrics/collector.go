// Package metrics exposes a state store's jobs as Prometheus metrics: a
// Collector that reads the store on every scrape (bounded queries only),
// an http.Handler for /metrics, and WriteFile for the node exporter's
// textfile collector (tidemark run --metrics-file). Every name is prefixed
// tidemark_.
package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemark-etl/tidemark/store"
)

// Backlog is what a job's next run would read now, per source ctx (from
// the planner; never from reading data).
type Backlog map[string]BacklogCount

// BacklogCount is one source ctx's backlog. Oldest is the modification
// time of the oldest unread file (zero: unknown, or a SQL table).
type BacklogCount struct {
	Files, Bytes, Rows int64
	Oldest             time.Time
}

// Options tune a Collector. The zero Options are usable.
type Options struct {
	// Jobs restricts the collector to these jobs; nil means every job the
	// store lists (store.JobLister).
	Jobs []string
	// Backlog, when set, returns a job's backlog (nil, nil: none known);
	// the backlog gauges are exported only for jobs it answers.
	Backlog func(ctx context.Context, job string) (Backlog, error)
	// MaxRuns bounds how many runs of a job are read to find its last
	// success (default 1000, read in pages of 20).
	MaxRuns int
	// Timeout bounds one scrape's store reads (default 10s).
	Timeout time.Duration
	// Now is the clock for backlog ages (default time.Now).
	Now func() time.Time
	// Logger receives read errors (default: discarded).
	Logger *slog.Logger
}

// Collector is a prometheus.Collector over a state store. It reads the
// store on each Collect; a read error is logged and exported as
// tidemark_store_up 0, never a failed scrape. Safe for concurrent use.
type Collector struct {
	st   store.Store
	opts Options
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector reading st.
func NewCollector(st store.Store, opts Options) *Collector {
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 1000
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Collector{st: st, opts: opts}
}

// Describe sends every metric's description.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect reads the store and sends the metrics of every job.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	up := 1.0
	jobs, err := c.jobs(ctx)
	if err != nil {
		c.opts.Logger.Warn("metrics: listing jobs", "err", err)
		up = 0
	}
	for _, j := range jobs {
		if err := c.collectJob(ctx, ch, j); err != nil {
			c.opts.Logger.Warn("metrics: reading job", "job", j, "err", err)
			up = 0
		}
	}
	ch <- prometheus.MustNewConstMetric(descStoreUp, prometheus.GaugeValue, up)
}

// jobs are the jobs to export.
func (c *Collector) jobs(ctx context.Context) ([]string, error) {
	if c.opts.Jobs != nil {
		return c.opts.Jobs, nil
	}
	l, ok := c.st.(store.JobLister)
	if !ok {
		return nil, nil
	}
	return l.Jobs(ctx)
}
