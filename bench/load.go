package main

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// withLoad opens a scenario's section with how loaded the machine was
// while it ran (the load average before and after, as the glue scenario
// reports it): on a shared machine its times are read in that light.
func withLoad(f func(context.Context, *config) section) func(context.Context, *config) section {
	return func(ctx context.Context, c *config) section {
		before, started := readTrim("/proc/loadavg"), time.Now()
		s := f(ctx, c)
		var d doc
		d.p(fmt.Sprintf("Measured on %s UTC over %s, %d core(s). Load average (1, 5, 15 min) before: %s; after: %s. "+
			"With a load above the number of cores the machine is shared and loaded, and every time here is longer "+
			"and noisier than on a quiet machine; the ratios are the figures to read.",
			started.UTC().Format("2006-01-02 15:04"), roundDur(time.Since(started)), runtime.NumCPU(),
			loadFields(before), loadFields(readTrim("/proc/loadavg"))))
		d.b.Write(s.Body.b.Bytes())
		s.Body = d
		return s
	}
}
