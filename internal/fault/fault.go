// Package fault is the fault-injection hook for crash tests: when the
// environment variable TIDEMARK_FAULT names a step, the process kills itself
// (SIGKILL, no deferred cleanup) when it reaches that step. The form
// STEP:sleep=DURATION pauses there instead, so a test can change the world
// at that moment (delete an input between planning and reading, say).
package fault

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// The steps a run passes, in order.
const (
	AfterPlan    = "after-plan"    // planned, nothing executed
	MidRead      = "mid-read"      // the engine has opened its inputs (and sniffed them), rows not yet written
	AfterStage   = "after-stage"   // output staged, state not committed
	AfterCommit  = "after-commit"  // state committed, nothing published
	MidPublish   = "mid-publish"   // first staged file moved to its final name
	AfterPublish = "after-publish" // all moved, run not yet marked published
	AfterBatch   = "after-batch"   // a batch of a run read in batches committed and published, the next not begun

	// PurgeChecked is a step of `bookmark reset --purge-output`: every sink
	// location was checked, nothing was reset or deleted yet.
	PurgeChecked = "purge-checked"
)

// Steps lists every step of a run, for tests.
var Steps = []string{AfterPlan, MidRead, AfterStage, AfterCommit, MidPublish, AfterPublish, AfterBatch}

var armed, pause = parse(os.Getenv("TIDEMARK_FAULT"))

func parse(v string) (string, time.Duration) {
	step, arg, ok := strings.Cut(v, ":")
	if !ok {
		return step, 0
	}
	d, err := time.ParseDuration(strings.TrimPrefix(arg, "sleep="))
	if err != nil || !strings.HasPrefix(arg, "sleep=") {
		return step, 0
	}
	return step, d
}

// Hook, when set (by in-process tests), is called at every step instead of
// the environment check; a test simulates a crash by panicking from it.
var Hook func(step string)

// At kills (or pauses) the process if step is the armed fault.
func At(step string) {
	if Hook != nil {
		Hook(step)
		return
	}
	if armed == "" || armed != step {
		return
	}
	if pause > 0 {
		fmt.Fprintf(os.Stderr, "fault: paused at %s for %s\n", step, pause) // tests wait for this line
		time.Sleep(pause)
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
