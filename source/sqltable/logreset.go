package sqltable

import (
	"context"
	"fmt"

	"github.com/dustin/go-humanize"
	"github.com/jackc/pglogrepl"

	"github.com/tidemark-etl/tidemark/source"
)

// resetLog is the SQL table kind's part of a bookmark reset
// (source.Resetter): a changes: log source's replication slot is dropped
// when the reset leaves the source no position (the next run creates it
// with a new snapshot), and kept when the reset restores a position the
// slot still holds; a position the slot has moved past, or a slot that is
// gone, refuses the reset (the changes in between cannot be read again).
// Given the job's name, not its file, it cannot connect and says what it
// leaves.
func resetLog(ctx context.Context, req source.ResetRequest) (string, error) {
	now, after := StateDetailOf(req.Now).Log, StateDetailOf(req.After).Log
	if !req.HasNow {
		now = nil
	}
	if !req.HasAfter {
		after = nil
	}
	var cfg *JobConfig
	if req.Source != nil {
		cfg, _ = req.Source.Config.(*JobConfig)
		if cfg == nil || cfg.Changes != ChangesLog {
			cfg = nil
		}
	}
	if cfg == nil {
		if now == nil {
			return "", nil
		}
		if after != nil && after.Slot == now.Slot {
			return fmt.Sprintf("replication slot %s left as it is (the reset was given the job's name, not its file); the next run reads it after %s", now.Slot, after.LSN), nil
		}
		return fmt.Sprintf("replication slot %s left as it is (the reset was given the job's name, not its file, so it cannot connect): "+
			"the next run drops it and creates it again with a new snapshot; to drop it now: SELECT pg_drop_replication_slot('%s')", now.Slot, now.Slot), nil
	}
	s := OpenLog(req.Spec, *req.Source)
	defer s.Close()
	if err := s.connect(ctx); err != nil {
		return "", err
	}
	st, err := s.srv.status(ctx)
	if err != nil {
		return "", s.fail("reading its replication slot", err)
	}
	would := func(did, would string) string {
		if req.DryRun {
			return would
		}
		return did
	}
	if after == nil {
		if !st.Exists {
			return fmt.Sprintf("replication slot %s does not exist; the next run creates it and reads a new snapshot", s.slot), nil
		}
		if !req.DryRun {
			if err := s.srv.dropSlot(ctx); err != nil {
				return "", s.fail("dropping its replication slot", err)
			}
		}
		return fmt.Sprintf("replication slot %s %s (it retained %s of WAL); the next run creates it and reads a new snapshot",
			s.slot, would("dropped", "would be dropped"), humanize.IBytes(uint64(st.Retained()))), nil
	}
	lsn, err := pglogrepl.ParseLSN(after.LSN)
	if err != nil {
		return "", s.fail("reading the bookmark it rewinds to", fmt.Errorf("position %q: %w", after.LSN, err))
	}
	reset := fmt.Sprintf("reset without --to-run to read a new snapshot (`tidemark bookmark reset %s`)", req.Job)
	switch {
	case !st.Exists:
		return "", s.fail("checking its replication slot", fmt.Errorf("replication slot %s is gone, so the changes after %s, where the reset would rewind to, cannot be read: %s", s.slot, after.LSN, reset))
	case st.Confirmed > lsn:
		return "", s.fail("checking its replication slot", fmt.Errorf("replication slot %s has moved past the position the reset would rewind to (%s > %s), so the changes in between cannot be read again: %s",
			s.slot, lsnText(st.Confirmed), after.LSN, reset))
	}
	return fmt.Sprintf("replication slot %s %s: it still holds the changes after %s", s.slot, would("kept", "would be kept"), after.LSN), nil
}
