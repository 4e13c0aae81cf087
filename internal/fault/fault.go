// Package fault is the fault-injection hook for crash tests: when the
// environment variable TIDEMARK_FAULT names a step, the process kills itself
// (SIGKILL, no deferred cleanup) when it reaches that step.
package fault

import (
	"os"
	"syscall"
)

// The steps a run passes, in order.
const (
	AfterPlan    = "after-plan"    // planned, nothing executed
	AfterStage   = "after-stage"   // output staged, state not committed
	AfterCommit  = "after-commit"  // state committed, nothing published
	MidPublish   = "mid-publish"   // first staged file moved to its final name
	AfterPublish = "after-publish" // all moved, run not yet marked published
)

// Steps lists every step, for tests.
var Steps = []string{AfterPlan, AfterStage, AfterCommit, MidPublish, AfterPublish}

var armed = os.Getenv("TIDEMARK_FAULT")

// Hook, when set (by in-process tests), is called at every step instead of
// the environment check; a test simulates a crash by panicking from it.
var Hook func(step string)

// At kills the process if step is the armed fault.
func At(step string) {
	if Hook != nil {
		Hook(step)
		return
	}
	if armed != "" && armed == step {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
