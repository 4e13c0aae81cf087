package sqltable

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// validateDetect checks the keys of changes: detect, each at its key.
func (c *JobConfig) validateDetect(ck *job.Check) {
	if c.Query != "" {
		ck.Fail("query", "changes: detect reads a table, not a query (it compares rows by the table's primary key)")
	}
	for key, set := range map[string]bool{"bookmark_keys": len(c.BookmarkKeys) > 0, "lookback": c.Lookback != "",
		"bounded_rows": c.BoundedRows != 0, "bookmark_keys_sort_order": c.BookmarkKeysSortOrder != "asc" && c.BookmarkKeysSortOrder != ""} {
		if set {
			ck.Fail(key, "not with changes: detect (it compares the whole table by its primary key every run)")
		}
	}
}

// resetChanges is the SQL table kind's part of a bookmark reset
// (source.Resetter): a changes: log source's replication slot, a changes:
// detect source's key snapshot.
func resetChanges(ctx context.Context, req source.ResetRequest) (string, error) {
	if req.Source != nil {
		if cfg, _ := req.Source.Config.(*JobConfig); cfg != nil && cfg.Changes == ChangesDetect {
			return resetDetect(req)
		}
	}
	if req.Source == nil && req.HasNow && StateDetailOf(req.Now).Detect != nil {
		return resetDetect(req)
	}
	return resetLog(ctx, req)
}

// resetDetect deletes a changes: detect source's key snapshot when the
// reset leaves the source no bookmark (the next run delivers the whole
// table again), and keeps it for --to-run, which it refuses when a
// generation the restored bookmark names is gone. Given the job's name
// it cannot find the folder: the next run deletes what no bookmark names.
func resetDetect(req source.ResetRequest) (string, error) {
	now, after := StateDetailOf(req.Now).Detect, StateDetailOf(req.After).Detect
	if !req.HasNow {
		now = nil
	}
	if !req.HasAfter {
		after = nil
	}
	dir := ""
	switch {
	case req.Spec != nil && req.Source != nil:
		cfg := jobConfig(req.Spec, *req.Source)
		dir = snapshotDir(req.Spec, req.Ctx, cfg.Connection, cfg.Table)
	case now != nil:
		dir = now.Snapshot
	}
	if dir == "" {
		return "", nil
	}
	would := func(did, would string) string {
		if req.DryRun {
			return would
		}
		return did
	}
	if after == nil {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		if !req.DryRun {
			if err := os.RemoveAll(dir); err != nil {
				return "", fmt.Errorf("source %s: deleting its key snapshot %s: %w", req.Ctx, dir, err)
			}
		}
		return fmt.Sprintf("key snapshot %s %s; the next run delivers the whole table again", dir, would("deleted", "would be deleted")), nil
	}
	for i := range after.Ranges {
		g := after.generation(i)
		if g == "" {
			continue
		}
		if _, err := os.Stat(rangeFile(dir, g, i)); err != nil {
			return "", fmt.Errorf("source %s: the key snapshot of the run the reset would rewind to is gone (%s; the last %d unused generations are kept): "+
				"reset without --to-run (`tidemark bookmark reset %s`) to deliver the table again", req.Ctx, rangeFile(dir, g, i), keepGenerations, req.Job)
		}
	}
	return fmt.Sprintf("key snapshot %s %s: it still holds what that run delivered", dir, would("kept", "would be kept")), nil
}
