package store

import (
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// CheckCommit checks what every backend refuses in a commit before it
// reads anything: a run of another job, a failed run, and records without
// Advance (refused rather than dropped). It fills in c.Run.Job if empty.
func CheckCommit(c *Commit) error {
	if c.Run.Job == "" {
		c.Run.Job = c.Job
	}
	if c.Run.Job != c.Job {
		return fmt.Errorf("run belongs to job %q", c.Run.Job)
	}
	if c.Run.Status == StatusFailed {
		return fmt.Errorf("run status is %q, a commit records %q", c.Run.Status, StatusSucceeded)
	}
	if !c.Advance && (len(c.Sources) > 0 || len(c.Added) > 0 || len(c.Superseded) > 0 || len(c.Ranges) > 0) {
		return fmt.Errorf("sources or file records given without Advance")
	}
	return nil
}

// CheckResetTarget checks that target, the run a Reset rewinds to, is a
// committed, not undone, enable-mode run.
func CheckResetTarget(target Run) error {
	switch {
	case target.Status != StatusSucceeded:
		return fmt.Errorf("run %s %s; only a committed run can be rewound to", target.RunID, target.Status)
	case target.Undone:
		return fmt.Errorf("run %s was undone by an earlier reset; its bookmark is gone", target.RunID)
	case target.Mode != bookmark.ModeEnable:
		return fmt.Errorf("run %s ran in %s mode and did not advance the bookmark; rewind to an enable-mode run", target.RunID, target.Mode)
	}
	return nil
}
