package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Versions returns the job's bookmark versions newest first, bounded by q.
func (s *Store) Versions(ctx context.Context, job string, q store.VersionQuery) ([]store.Version, error) {
	query := `SELECT version, kind, run_id, created_at, requested_by FROM bookmark_versions WHERE job = ?`
	args := []any{job}
	if q.Before > 0 {
		query += ` AND version < ?`
		args = append(args, q.Before)
	}
	query += ` ORDER BY version DESC`
	if q.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing bookmark versions of job %q: %w", job, err)
	}
	defer rows.Close()
	var vs []store.Version
	for rows.Next() {
		var v store.Version
		var created int64
		if err := rows.Scan(&v.Version, &v.Kind, &v.RunID, &created, &v.By); err != nil {
			return nil, fmt.Errorf("listing bookmark versions of job %q: %w", job, err)
		}
		v.Kind = store.VersionKind(v.Kind, v.RunID)
		v.At = fromNanos(created)
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing bookmark versions of job %q: %w", job, err)
	}
	return vs, nil
}

// SourceStatesAt returns the source states of one bookmark version.
func (s *Store) SourceStatesAt(ctx context.Context, job string, version int64) (map[string]bookmark.SourceState, error) {
	states := map[string]bookmark.SourceState{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM bookmark_versions WHERE job = ? AND version = ?`,
			job, version).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return readStates(ctx, tx, job, version, states)
	})
	if err != nil {
		return nil, fmt.Errorf("reading source states of job %q at version %d: %w", job, version, err)
	}
	return states, nil
}
