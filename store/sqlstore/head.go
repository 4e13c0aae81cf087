package sqlstore

import (
	"context"
	"errors"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Head returns the job's newest bookmark version; Version 0 if it has none.
func (c *Core) Head(ctx context.Context, job string) (store.Head, error) {
	h, err := ReadHead(ctx, c.d.DB(), job)
	if err != nil {
		return store.Head{}, c.failf(err, "reading head of job %q", job)
	}
	return h, nil
}

// ReadHead reads the job's newest bookmark version (the primary key's
// index, read backwards: one row).
func ReadHead(ctx context.Context, q Querier, job string) (store.Head, error) {
	h := store.Head{Job: job}
	var created int64
	err := q.QueryRow(ctx, `
		SELECT version, run_id, created_at FROM bookmark_versions
		WHERE job = ? ORDER BY version DESC LIMIT 1`, job).Scan(&h.Version, &h.RunID, &created)
	if errors.Is(err, ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return store.Head{}, err
	}
	h.UpdatedAt = FromNanos(created)
	return h, nil
}

// SourceStates returns the source states of the job's head version (an
// empty map if it has none), read in one statement (one snapshot).
func (c *Core) SourceStates(ctx context.Context, job string) (map[string]bookmark.SourceState, error) {
	states, err := readStates(ctx, c.d.DB(), job, `
		SELECT version, ctx, state FROM source_states
		WHERE job = ? AND version = (SELECT max(version) FROM bookmark_versions WHERE job = ?)`, job, job)
	if err != nil {
		return nil, c.failf(err, "reading source states of job %q", job)
	}
	return states, nil
}

// readStates reads the (version, ctx, state) rows of query.
func readStates(ctx context.Context, q Querier, job, query string, args ...any) (map[string]bookmark.SourceState, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	states := map[string]bookmark.SourceState{}
	for rows.Next() {
		var version int64
		var srcCtx string
		var data []byte
		if err := rows.Scan(&version, &srcCtx, &data); err != nil {
			return nil, err
		}
		st, err := decodeState(job, srcCtx, version, data)
		if err != nil {
			return nil, err
		}
		states[srcCtx] = st
	}
	return states, rows.Err()
}

// Versions returns the job's bookmark versions newest first, bounded by q.
func (c *Core) Versions(ctx context.Context, job string, q store.VersionQuery) ([]store.Version, error) {
	query, args := newestFirst(`SELECT version, kind, run_id, created_at, requested_by FROM bookmark_versions WHERE job = ?`,
		"version", job, q.Before, q.Limit)
	vs, err := queryAll(ctx, c.d.DB(), func(row Row) (store.Version, error) {
		var v store.Version
		var created int64
		err := row.Scan(&v.Version, &v.Kind, &v.RunID, &created, &v.By)
		v.Kind, v.At = store.VersionKind(v.Kind, v.RunID), FromNanos(created)
		return v, err
	}, query, args...)
	if err != nil {
		return nil, c.failf(err, "listing bookmark versions of job %q", job)
	}
	return vs, nil
}

// SourceStatesAt returns the source states of one bookmark version;
// store.ErrNotFound for a version the job does not have.
func (c *Core) SourceStatesAt(ctx context.Context, job string, version int64) (map[string]bookmark.SourceState, error) {
	var states map[string]bookmark.SourceState
	err := c.d.Read(ctx, func(q Querier) error {
		var one int
		err := q.QueryRow(ctx, `SELECT 1 FROM bookmark_versions WHERE job = ? AND version = ?`, job, version).Scan(&one)
		if errors.Is(err, ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		states, err = readStates(ctx, q, job, `SELECT version, ctx, state FROM source_states WHERE job = ? AND version = ?`, job, version)
		return err
	})
	if err != nil {
		return nil, c.failf(err, "reading source states of job %q at version %d", job, version)
	}
	return states, nil
}
