package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// Reset writes a new head version holding the bookmark as run toRunID
// committed it (or an empty one when toRunID is ""), in one transaction
// under the job's lease row:
//
//   - the target version's source states are copied to the new version;
//   - file and range records added after the target version are deleted
//     and records superseded after it are current again;
//   - every succeeded, not yet undone run after the target (any mode) is
//     marked undone and returned, oldest first.
func (s *Store) Reset(ctx context.Context, job string, token int64, toRunID, by string) ([]store.Run, error) {
	var undone []store.Run
	err := s.write(ctx, func(tx pgx.Tx) error {
		var err error
		undone, err = reset(ctx, tx, job, token, toRunID, by)
		return err
	})
	if err != nil {
		if toRunID == "" {
			return nil, s.fail(fmt.Sprintf("resetting bookmark of job %q", job), err)
		}
		return nil, s.fail(fmt.Sprintf("rewinding bookmark of job %q to run %s", job, toRunID), err)
	}
	return undone, nil
}

func reset(ctx context.Context, tx pgx.Tx, job string, token int64, toRunID, by string) ([]store.Run, error) {
	if err := lockLease(ctx, tx, job, token); err != nil {
		return nil, err
	}
	var target store.Run // zero for a full reset: Version 0, Seq 0
	if toRunID != "" {
		var err error
		if target, err = getRun(ctx, tx, job, toRunID, false); err != nil {
			return nil, err
		}
		if err := store.CheckResetTarget(target); err != nil {
			return nil, err
		}
	}
	h, err := sqlstore.ReadHead(ctx, pgQ(tx), job)
	if err != nil {
		return nil, err
	}
	next := store.Head{Job: job, Version: h.Version + 1, RunID: toRunID}
	if _, err := insertVersion(ctx, tx, next, store.KindReset, by); err != nil {
		return nil, err
	}
	steps := []struct{ what, sql string }{
		{"copying source states", `INSERT INTO source_states (job, version, ctx, state)
			SELECT job, $3, ctx, state FROM source_states WHERE job = $1 AND version = $2`},
		{"deleting file records", `DELETE FROM files WHERE job = $1 AND added_version > $2`},
		{"deleting range records", `DELETE FROM ranges WHERE job = $1 AND added_version > $2`},
		{"restoring superseded file records", `UPDATE files SET removed_version = NULL WHERE job = $1 AND removed_version > $2`},
	}
	for _, st := range steps {
		args := []any{job, target.Version}
		if st.what == "copying source states" {
			args = append(args, next.Version)
		}
		if _, err := tx.Exec(ctx, st.sql, args...); err != nil {
			return nil, fmt.Errorf("%s after version %d: %w", st.what, target.Version, err)
		}
	}
	undone, err := sqlstore.QueryRuns(ctx, pgQ(tx), `
		UPDATE runs SET undone = true WHERE job = $1 AND status = 'succeeded' AND NOT undone AND seq > $2
		RETURNING `+runColumns, job, target.Seq)
	if err != nil {
		return nil, fmt.Errorf("marking runs undone: %w", err)
	}
	// RETURNING has no order of its own.
	slices.SortFunc(undone, func(a, b store.Run) int { return cmp.Compare(a.Seq, b.Seq) })
	return undone, nil
}
