package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// Reset writes a new head version holding the bookmark as run toRunID
// committed it (or an empty one when toRunID is ""), in one transaction
// under the job's lease:
//
//   - the target version's source states are copied to the new version;
//   - file records added after the target version are deleted and records
//     superseded after it are current again, so the files table holds the
//     target's records exactly (a full reset deletes them all);
//   - every succeeded, not yet undone run after the target (any mode) is
//     marked undone and returned, oldest first.
//
// Versions only grow, so a run that planned before the reset fails its
// commit with store.ErrVersionConflict.
func (s *Store) Reset(ctx context.Context, job string, token int64, toRunID, by string) ([]store.Run, error) {
	var undone []store.Run
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		undone, err = reset(ctx, tx, job, token, toRunID, by)
		return err
	})
	if err != nil {
		if toRunID == "" {
			return nil, fmt.Errorf("resetting bookmark of job %q: %w", job, err)
		}
		return nil, fmt.Errorf("rewinding bookmark of job %q to run %s: %w", job, toRunID, err)
	}
	return undone, nil
}

// reset is Reset inside the write transaction.
func reset(ctx context.Context, tx *sql.Tx, job string, token int64, toRunID, by string) ([]store.Run, error) {
	if err := checkToken(ctx, tx, job, token); err != nil {
		return nil, err
	}
	var target store.Run // zero for a full reset: Version 0, Seq 0
	if toRunID != "" {
		var err error
		if target, err = getRun(ctx, tx, job, toRunID); err != nil {
			return nil, err
		}
		if err := store.CheckResetTarget(target); err != nil {
			return nil, err
		}
	}
	h, err := sqlstore.ReadHead(ctx, sqlstore.SQL(tx), job)
	if err != nil {
		return nil, err
	}
	next := store.Head{Job: job, Version: h.Version + 1, RunID: toRunID, UpdatedAt: fromNanos(nanos(time.Now()))}
	if err := insertVersion(ctx, tx, next, store.KindReset, by); err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO source_states (job, version, ctx, state)
		SELECT job, ?, ctx, state FROM source_states WHERE job = ? AND version = ?`,
		next.Version, job, target.Version)
	if err != nil {
		return nil, fmt.Errorf("copying source states of version %d: %w", target.Version, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE job = ? AND added_version > ?`, job, target.Version); err != nil {
		return nil, fmt.Errorf("deleting file records after version %d: %w", target.Version, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM ranges WHERE job = ? AND added_version > ?`, job, target.Version); err != nil {
		return nil, fmt.Errorf("deleting range records after version %d: %w", target.Version, err)
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE files SET removed_version = NULL WHERE job = ? AND removed_version > ?`, job, target.Version)
	if err != nil {
		return nil, fmt.Errorf("restoring file records superseded after version %d: %w", target.Version, err)
	}
	undone, err := sqlstore.QueryRuns(ctx, sqlstore.SQL(tx), `
		SELECT `+runColumns+` FROM runs
		WHERE job = ? AND status = 'succeeded' AND undone = 0 AND seq > ?
		ORDER BY seq`, job, target.Seq)
	if err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE runs SET undone = 1 WHERE job = ? AND status = 'succeeded' AND undone = 0 AND seq > ?`,
		job, target.Seq)
	if err != nil {
		return nil, fmt.Errorf("marking runs undone: %w", err)
	}
	for i := range undone {
		undone[i].Undone = true
	}
	return undone, nil
}
