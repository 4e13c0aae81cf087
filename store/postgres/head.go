package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Head returns the job's newest bookmark version; Version 0 if it has none.
func (s *Store) Head(ctx context.Context, job string) (store.Head, error) {
	h, err := head(ctx, s.pool, job)
	if err != nil {
		return store.Head{}, s.fail(fmt.Sprintf("reading head of job %q", job), err)
	}
	return h, nil
}

// head reads the job's newest bookmark version (the primary key's index,
// read backwards: one row).
func head(ctx context.Context, q queryer, job string) (store.Head, error) {
	h := store.Head{Job: job}
	var created int64
	err := q.QueryRow(ctx, `
		SELECT version, run_id, created_at FROM bookmark_versions
		WHERE job = $1 ORDER BY version DESC LIMIT 1`, job).Scan(&h.Version, &h.RunID, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return h, nil
	}
	if err != nil {
		return store.Head{}, err
	}
	h.UpdatedAt = fromNS(&created)
	return h, nil
}

// SourceStates returns the source states of the job's head version, read
// in one statement (one snapshot).
func (s *Store) SourceStates(ctx context.Context, job string) (map[string]bookmark.SourceState, error) {
	states, err := readStates(ctx, s.pool, job, `
		SELECT version, ctx, state FROM source_states
		WHERE job = $1 AND version = (SELECT max(version) FROM bookmark_versions WHERE job = $1)`, job)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("reading source states of job %q", job), err)
	}
	return states, nil
}

// readStates reads the (version, ctx, state) rows of query.
func readStates(ctx context.Context, q queryer, job, query string, args ...any) (map[string]bookmark.SourceState, error) {
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
		var st bookmark.SourceState
		if err := decodeObject(data, &st); err != nil {
			return nil, fmt.Errorf("decoding state of job %q source %q at version %d: %w", job, srcCtx, version, err)
		}
		states[srcCtx] = st
	}
	return states, rows.Err()
}

// Versions returns the job's bookmark versions newest first, bounded by q.
func (s *Store) Versions(ctx context.Context, job string, q store.VersionQuery) ([]store.Version, error) {
	before, limit := q.Before, int64(q.Limit)
	if before <= 0 {
		before = 1<<63 - 1
	}
	if limit <= 0 {
		limit = 1<<63 - 1
	}
	rows, err := s.pool.Query(ctx, `
		SELECT version, kind, run_id, created_at, requested_by FROM bookmark_versions
		WHERE job = $1 AND version < $2 ORDER BY version DESC LIMIT $3`, job, before, limit)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("listing bookmark versions of job %q", job), err)
	}
	vs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Version, error) {
		var v store.Version
		var at int64
		err := row.Scan(&v.Version, &v.Kind, &v.RunID, &at, &v.By)
		v.Kind, v.At = store.VersionKind(v.Kind, v.RunID), fromNS(&at)
		return v, err
	})
	if err != nil {
		return nil, s.fail(fmt.Sprintf("listing bookmark versions of job %q", job), err)
	}
	return vs, nil
}

// SourceStatesAt returns the source states of one bookmark version.
func (s *Store) SourceStatesAt(ctx context.Context, job string, version int64) (map[string]bookmark.SourceState, error) {
	what := fmt.Sprintf("reading source states of job %q at version %d", job, version)
	var states map[string]bookmark.SourceState
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM bookmark_versions WHERE job = $1 AND version = $2`, job, version).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		states, err = readStates(ctx, tx, job, `SELECT version, ctx, state FROM source_states WHERE job = $1 AND version = $2`, job, version)
		return err
	})
	if err != nil {
		return nil, s.fail(what, err)
	}
	return states, nil
}

// readTx runs fn in a read-only repeatable-read transaction: one snapshot
// across its statements.
func (s *Store) readTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	return fn(tx)
}

// decodeObject unmarshals data, which must be exactly one JSON object
// (json.Unmarshal alone accepts "null" as the zero value).
func decodeObject(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("not a JSON object: %.40q", data)
	}
	return json.Unmarshal(trimmed, v)
}
