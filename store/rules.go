package store

import (
	"fmt"
	"slices"
)

// The rules below are the decisions every backend makes the same way,
// written once. The object-state core (store/objcore, under memory and
// s3) calls them; the SQL core (store/sqlstore) states the same conditions
// in its queries, where a database's indexes serve them, and says so
// beside them.

// NextAttempt is the Attempt of a run begun after runs, the job's runs
// newest first: 1 + the failed runs since the newest succeeded one
// (runs still running count for nothing).
func NextAttempt(statuses func(yield func(status string) bool)) int {
	attempt := 1
	for st := range statuses {
		if st == StatusSucceeded {
			break
		}
		if st == StatusFailed {
			attempt++
		}
	}
	return attempt
}

// Undoes reports whether a reset to target (the zero Run for a full
// reset) undoes r: a succeeded run after the target, in any mode, that no
// earlier reset undid.
func Undoes(target, r Run) bool {
	return r.Seq > target.Seq && r.Status == StatusSucceeded && !r.Undone
}

// RollsForward reports whether a run's output must be published again by
// the next command (Unpublished): it committed, no reset undid it (its
// input is read again after the reset, so publishing it would duplicate
// it), and one of its outputs is not published yet.
func RollsForward(r Run, outs []Output) bool {
	return r.Status == StatusSucceeded && !r.Undone && slices.ContainsFunc(outs, func(o Output) bool { return !o.Published })
}

// PublishedAt reports whether output o of run r is among the job's
// published outputs at root (PublishedOutputs): r succeeded, o was
// published and no purge has deleted it since. Runs undone without purge
// count: their output is still there.
func PublishedAt(r Run, o Output, root string) bool {
	return r.Status == StatusSucceeded && !r.Purged && o.Published && o.Root == root
}

// CheckOutputs checks what a commit records besides files, as a
// database's constraints would: ranges and outputs name the run (or
// none), and outputs are unique by sink and final, among themselves and
// with recorded, the run's outputs already stored.
func CheckOutputs(c Commit, recorded []Output) error {
	for _, r := range c.Ranges {
		if r.RunID != "" && r.RunID != c.Run.RunID {
			return fmt.Errorf("range of source %q names run %s", r.Ctx, r.RunID)
		}
	}
	type outKey struct{ sink, final string }
	outs := map[outKey]bool{}
	for _, o := range recorded {
		outs[outKey{o.Sink, o.Final}] = true
	}
	for _, o := range c.Outputs {
		if o.RunID != "" && o.RunID != c.Run.RunID {
			return fmt.Errorf("output %s names run %s", o.Final, o.RunID)
		}
		k := outKey{o.Sink, o.Final}
		if outs[k] {
			return fmt.Errorf("recording output %s of sink %q: recorded twice", o.Final, o.Sink)
		}
		outs[k] = true
	}
	return nil
}

// CheckFileRecords checks a commit's file records against the current
// ones (current reports whether a source ctx holds a current record of a
// path), as a database's constraints would: each superseded record is
// current and named once, and no added path is current after superseding
// or added twice. A planner that breaks them has a bug, and the commit is
// refused.
func CheckFileRecords(c Commit, current func(srcCtx, path string) bool) error {
	type fileKey struct{ ctx, path string }
	gone := map[fileKey]bool{}
	for _, r := range c.Superseded {
		k := fileKey{r.Ctx, r.File.Path}
		if !current(r.Ctx, r.File.Path) || gone[k] {
			return fmt.Errorf("superseding %s in source %q: no current record", r.File.Path, r.Ctx)
		}
		gone[k] = true
	}
	added := map[fileKey]bool{}
	for _, r := range c.Added {
		k := fileKey{r.Ctx, r.File.Path}
		if (current(r.Ctx, r.File.Path) && !gone[k]) || added[k] {
			return fmt.Errorf("recording %s in source %q: a current record exists", r.File.Path, r.Ctx)
		}
		added[k] = true
	}
	return nil
}

// CheckBase is a commit's compare-and-swap on the bookmark version: one
// that advances must have been planned against the head h, else
// ErrVersionConflict; one that does not advance passes.
func CheckBase(c Commit, h Head) error {
	if c.Advance && h.Version != c.BaseVersion {
		return fmt.Errorf("planned against version %d, head is %d (run %s): %w",
			c.BaseVersion, h.Version, h.RunID, ErrVersionConflict)
	}
	return nil
}

// CheckRunning refuses to finish a run that already finished: failing a
// committed run would hide a bookmark that did move, and committing a run
// twice would record its output twice.
func CheckRunning(r Run) error {
	if r.Status != StatusRunning {
		return fmt.Errorf("run already %s", r.Status)
	}
	return nil
}
