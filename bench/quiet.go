package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"
)

// The machine may be shared: other processes (someone's build, a test
// suite) that take the CPU during a measurement make it noise. The harness
// waits for a quiet moment before each measurement, measures how much CPU
// the others used meanwhile, and takes a disturbed sample again.

// retake runs take until it yields a sample during which other processes
// used at most c.MaxOtherLoad cores, at most 1+c.Retakes times, and counts
// the samples it threw away in *discarded. A failed sample is kept at once:
// a failure is a result. take must be repeatable: each call a whole,
// independent measurement.
func retake[T any](ctx context.Context, c *config, what string, take func() T, m func(T) measured, discarded *int) T {
	for i := 0; ; i++ {
		x := take()
		mm := m(x)
		if mm.Err != nil || mm.OtherLoad <= c.MaxOtherLoad || i >= c.Retakes || ctx.Err() != nil {
			return x
		}
		*discarded++
		logf("%s: %s, but other processes used %.1f cores meanwhile; taking it again", what, secs(mm.Wall), mm.OtherLoad)
	}
}

// cpuBusy is the machine's busy CPU time so far, from /proc/stat: user,
// nice, system, irq, softirq and steal of all cores.
func cpuBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// minLoadWindow is the shortest interval over which others' load is taken.
const minLoadWindow = time.Second

// clockTicks is USER_HZ, the unit of /proc/stat; 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// otherLoad is how busy the machine was with anything but the measured
// process, in cores, over the interval: its busy time minus the child's CPU
// time, divided by the wall time.
func otherLoad(busy0, busy1, child, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return max(0, (busy1-busy0-child).Seconds()/wall.Seconds())
}

// settle waits, up to limit, for a second in which the machine is nearly
// idle (others use under a quarter of a core), so that a measurement does not
// start in the middle of someone else's build. It returns the load seen last.
func settle(ctx context.Context, limit time.Duration) float64 {
	deadline := time.Now().Add(limit)
	load := 0.0
	for {
		b0, t0 := cpuBusy(), time.Now()
		select {
		case <-ctx.Done():
			return load
		case <-time.After(time.Second):
		}
		load = otherLoad(b0, cpuBusy(), 0, time.Since(t0))
		if load < 0.25 || time.Now().After(deadline) {
			return load
		}
	}
}
