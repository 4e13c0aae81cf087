package main

import (
	"fmt"
	"os"
	"time"
)

// clockSkewEnv names a test hook: a duration (e.g. "-90s", "2h") added to
// this process's own clock for a run, to test a host whose clock is wrong.
// It changes the times the run stamps and the "now" of its listing, never
// the state store's clock, which alone judges lease expiry. Not for
// production use.
const clockSkewEnv = "TIDEMARK_TEST_CLOCK_SKEW"

// skewedClock is the run's clock under TIDEMARK_TEST_CLOCK_SKEW; nil when
// the variable is unset.
func skewedClock() (func() time.Time, error) {
	v := os.Getenv(clockSkewEnv)
	if v == "" {
		return nil, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s=%q: want a duration such as -90s or 2h", clockSkewEnv, v)}
	}
	return func() time.Time { return time.Now().Add(d) }, nil
}
