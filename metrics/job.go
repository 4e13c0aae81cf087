package metrics

import (
	"context"
	"fmt"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// runPage is how many runs one query reads while looking for the last
// finished and the last succeeded run.
const runPage = 20

// collectJob sends one job's metrics; what it read before an error is
// sent.
func (c *Collector) collectJob(ctx context.Context, ch chan<- prometheus.Metric, job string) error {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{job}, labels...)...)
	}
	head, err := c.st.Head(ctx, job)
	if err != nil {
		return err
	}
	gauge(descBookmarkVersion, float64(head.Version))
	if lr, ok := c.st.(store.LeaseReader); ok {
		l, held, err := lr.CurrentLease(ctx, job)
		if err != nil {
			return err
		}
		if held {
			gauge(descLeaseHeld, 1, l.Holder.ID)
		} else {
			gauge(descLeaseHeld, 0, "")
		}
	}
	last, success, err := c.lastRuns(ctx, job)
	if err != nil {
		return err
	}
	if success != nil {
		gauge(descLastSuccess, unixSeconds(success))
	}
	if last != nil {
		status := 0.0
		if last.Status == store.StatusSucceeded {
			status = 1
		}
		gauge(descLastStatus, status)
		gauge(descDuration, last.FinishedAt.Sub(last.StartedAt).Seconds())
		for _, k := range sortedKeys(last.Sources) {
			n := last.Sources[k]
			gauge(descSourceRows, float64(n.Rows), k)
			gauge(descSourceBytes, float64(n.Bytes), k)
			gauge(descSourceFiles, float64(n.Files), k)
			gauge(descSourceRejected, float64(n.Rejected), k)
			gauge(descSourceRegressions, float64(n.Number("regressions")), k)
		}
		for _, k := range sortedKeys(last.Sinks) {
			n := last.Sinks[k]
			gauge(descSinkRows, float64(n.Rows), k)
			gauge(descSinkBytes, float64(n.Bytes), k)
			gauge(descSinkFiles, float64(n.Files), k)
		}
	}
	states, err := c.st.SourceStates(ctx, job)
	if err != nil {
		return err
	}
	for _, k := range sortedKeys(states) {
		if v, ok := bookmark.StateNumber(states[k], "slot_retained_wal_bytes"); ok {
			gauge(descSlotRetained, float64(v), k)
		}
		if v, ok := bookmark.StateNumber(states[k], "slot_lag_bytes"); ok {
			gauge(descSlotLag, float64(v), k)
		}
	}
	if c.opts.Backlog == nil {
		return nil
	}
	b, err := c.opts.Backlog(ctx, job)
	if err != nil {
		return fmt.Errorf("planning backlog: %w", err)
	}
	for _, k := range sortedKeys(b) {
		n := b[k]
		gauge(descBacklogFiles, float64(n.Files), k)
		gauge(descBacklogBytes, float64(n.Bytes), k)
		gauge(descBacklogRows, float64(n.Rows), k)
		if !n.Oldest.IsZero() {
			gauge(descBacklogOldest, max(c.opts.Now().Sub(n.Oldest).Seconds(), 0), k)
		}
	}
	return nil
}

// lastRuns finds the job's newest finished run and newest succeeded run,
// reading at most MaxRuns runs in pages (nil: none among them). A run
// still running is no last run: its counts are not known yet.
func (c *Collector) lastRuns(ctx context.Context, job string) (last, success *store.Run, err error) {
	read := 0
	for r, err := range store.EachRun(ctx, c.st, job, 0, runPage) {
		if err != nil {
			return nil, nil, err
		}
		if r.Status != store.StatusRunning && last == nil {
			last = &r
		}
		if r.Status == store.StatusSucceeded {
			success = &r
			return last, success, nil
		}
		if read++; read >= c.opts.MaxRuns {
			break
		}
	}
	return last, success, nil
}

// unixSeconds is a run's finish time in Unix seconds.
func unixSeconds(r *store.Run) float64 {
	return float64(r.FinishedAt.UnixNano()) / 1e9
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
