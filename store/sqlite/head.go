package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Head returns the job's newest bookmark version; Version 0 if it has none.
func (s *Store) Head(ctx context.Context, job string) (store.Head, error) {
	h, err := head(ctx, s.db, job)
	if err != nil {
		return store.Head{}, fmt.Errorf("reading head of job %q: %w", job, err)
	}
	return h, nil
}

// head reads the job's newest bookmark version.
func head(ctx context.Context, q querier, job string) (store.Head, error) {
	h := store.Head{Job: job}
	var created int64
	err := q.QueryRowContext(ctx, `
		SELECT version, run_id, created_at FROM bookmark_versions
		WHERE job = ? ORDER BY version DESC LIMIT 1`, job).Scan(&h.Version, &h.RunID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return store.Head{}, err
	}
	h.UpdatedAt = fromNanos(created)
	return h, nil
}

// SourceStates returns the source states of the job's head version (an
// empty map if it has none).
func (s *Store) SourceStates(ctx context.Context, job string) (map[string]bookmark.SourceState, error) {
	states := map[string]bookmark.SourceState{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		h, err := head(ctx, tx, job)
		if err != nil {
			return err
		}
		return readStates(ctx, tx, job, h.Version, states)
	})
	if err != nil {
		return nil, fmt.Errorf("reading source states of job %q: %w", job, err)
	}
	return states, nil
}

// readStates adds the source states of one version to states.
func readStates(ctx context.Context, tx *sql.Tx, job string, version int64, states map[string]bookmark.SourceState) error {
	rows, err := tx.QueryContext(ctx, `
		SELECT ctx, state FROM source_states WHERE job = ? AND version = ?`, job, version)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var srcCtx string
		var data []byte
		if err := rows.Scan(&srcCtx, &data); err != nil {
			return err
		}
		st, err := decodeState(job, srcCtx, version, data)
		if err != nil {
			return err
		}
		states[srcCtx] = st
	}
	return rows.Err()
}
