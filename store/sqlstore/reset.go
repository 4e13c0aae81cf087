package sqlstore

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/store"
)

// Reset writes a new head version holding the bookmark as run toRunID
// committed it (or an empty one when toRunID is ""), in one transaction
// under the job's lease:
//
//   - the target version's source states are copied to the new version;
//   - file and range records added after the target version are deleted
//     and records superseded after it are current again, so the files
//     table holds the target's records exactly (a full reset deletes them
//     all);
//   - every succeeded, not yet undone run after the target (any mode) is
//     marked undone and returned, oldest first.
//
// Versions only grow, so a run that planned before the reset fails its
// commit with store.ErrVersionConflict.
func (c *Core) Reset(ctx context.Context, job string, token int64, toRunID, by string) ([]store.Run, error) {
	var undone []store.Run
	err := c.d.Write(ctx, func(q Querier) error {
		var err error
		undone, err = c.reset(ctx, q, job, token, toRunID, by)
		return err
	})
	if err != nil {
		if toRunID == "" {
			return nil, c.failf(err, "resetting bookmark of job %q", job)
		}
		return nil, c.failf(err, "rewinding bookmark of job %q to run %s", job, toRunID)
	}
	return undone, nil
}

// reset is Reset inside the write transaction.
func (c *Core) reset(ctx context.Context, q Querier, job string, token int64, toRunID, by string) ([]store.Run, error) {
	if err := c.d.LockLease(ctx, q, job, token); err != nil {
		return nil, err
	}
	var target store.Run // zero for a full reset: Version 0, Seq 0
	if toRunID != "" {
		var err error
		if target, err = GetRun(ctx, q, c.d.RunColumns(), job, toRunID, ""); err != nil {
			return nil, err
		}
		if err := store.CheckResetTarget(target); err != nil {
			return nil, err
		}
	}
	h, err := ReadHead(ctx, q, job)
	if err != nil {
		return nil, err
	}
	now, err := c.d.Clock(ctx, q)
	if err != nil {
		return nil, err
	}
	next := store.Head{Job: job, Version: h.Version + 1, RunID: toRunID, UpdatedAt: FromNanos(now.UnixNano())}
	if err := insertVersion(ctx, q, next, store.KindReset, by); err != nil {
		return nil, err
	}
	steps := []struct {
		what, sql string
		args      []any
	}{
		{"copying source states", `INSERT INTO source_states (job, version, ctx, state)
			SELECT job, ?, ctx, state FROM source_states WHERE job = ? AND version = ?`, []any{next.Version, job, target.Version}},
		{"deleting file records", `DELETE FROM files WHERE job = ? AND added_version > ?`, []any{job, target.Version}},
		{"deleting range records", `DELETE FROM ranges WHERE job = ? AND added_version > ?`, []any{job, target.Version}},
		{"restoring superseded file records", `UPDATE files SET removed_version = NULL WHERE job = ? AND removed_version > ?`, []any{job, target.Version}},
	}
	for _, st := range steps {
		if _, err := q.Exec(ctx, st.sql, st.args...); err != nil {
			return nil, fmt.Errorf("%s after version %d: %w", st.what, target.Version, err)
		}
	}
	// The runs store.Undoes names.
	undone, err := QueryRuns(ctx, q, `
		SELECT `+c.d.RunColumns()+` FROM runs
		WHERE job = ? AND status = 'succeeded' AND undone = `+c.d.Bool(false)+` AND seq > ?
		ORDER BY seq`, job, target.Seq)
	if err != nil {
		return nil, err
	}
	_, err = q.Exec(ctx, `
		UPDATE runs SET undone = `+c.d.Bool(true)+` WHERE job = ? AND status = 'succeeded' AND undone = `+c.d.Bool(false)+` AND seq > ?`,
		job, target.Seq)
	if err != nil {
		return nil, fmt.Errorf("marking runs undone: %w", err)
	}
	for i := range undone {
		undone[i].Undone = true
	}
	return undone, nil
}
