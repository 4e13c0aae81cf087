package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"iter"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// streamPage is how many rows a stream fetches from its cursor at a time:
// what a stream holds in memory, however many rows the query has.
const streamPage = 2000

// stream yields the rows of query, each read by scan, from one snapshot:
// the query runs as a cursor in a read-only transaction and is fetched
// streamPage rows at a time, so that a million rows are never held at
// once. Breaking out of the loop closes the cursor without reading the
// rest (a plain query would drain it). An error is yielded once, last,
// with what it was doing.
func stream[T any](ctx context.Context, s *Store, what, query string, args []any, scan func(pgx.Rows) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		fail := func(err error) { yield(zero, s.fail(what, err)) }
		tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
		if err != nil {
			fail(err)
			return
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		// A stream locks no rows, and its reader may take its time between
		// pages: the idle-transaction timeout meant for writes is lifted.
		if _, err := tx.Exec(ctx, `SET LOCAL idle_in_transaction_session_timeout = 0`); err != nil {
			fail(err)
			return
		}
		// The cursor is named after the query, so that the FETCH statement
		// pgx prepares and caches has one shape of result.
		h := fnv.New64a()
		h.Write([]byte(query))
		cursor := fmt.Sprintf("tidemark_%x", h.Sum64())
		if _, err := tx.Exec(ctx, `DECLARE `+cursor+` NO SCROLL CURSOR FOR `+query, args...); err != nil {
			fail(err)
			return
		}
		for {
			rows, err := tx.Query(ctx, fmt.Sprintf(`FETCH %d FROM %s`, streamPage, cursor))
			if err != nil {
				fail(err)
				return
			}
			n := 0
			for rows.Next() {
				n++
				v, err := scan(rows)
				if err != nil {
					rows.Close()
					fail(err)
					return
				}
				if !yield(v, nil) {
					rows.Close()
					return
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				fail(err)
				return
			}
			if n < streamPage {
				return
			}
		}
	}
}

// Files streams the current file records of one source ctx in byte order
// of Path, along the files_current index (no sort).
func (s *Store) Files(ctx context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error] {
	return stream(ctx, s, fmt.Sprintf("listing files of job %q source %q", job, srcCtx), `
		SELECT path, size, mtime, etag FROM files
		WHERE job = $1 AND ctx = $2 AND removed_version IS NULL
		ORDER BY path`, []any{job, srcCtx},
		func(rows pgx.Rows) (f bookmark.File, err error) {
			err = rows.Scan(&f.Path, &f.Size, &f.MTime, &f.ETag)
			return f, err
		})
}

// RunInputs streams the file records the given runs added, superseded ones
// included, ordered by ctx, then path, then the version that added them.
// Records of runs undone by a reset are gone (the reset deleted them).
func (s *Store) RunInputs(ctx context.Context, job string, runIDs []string) iter.Seq2[store.FileRecord, error] {
	if len(runIDs) == 0 {
		return func(func(store.FileRecord, error) bool) {}
	}
	return stream(ctx, s, fmt.Sprintf("listing inputs of job %q runs %v", job, runIDs), `
		SELECT ctx, path, size, mtime, etag FROM files
		WHERE job = $1 AND run_id = ANY($2::text[])
		ORDER BY ctx, path, added_version`, []any{job, runIDs},
		func(rows pgx.Rows) (r store.FileRecord, err error) {
			err = rows.Scan(&r.Ctx, &r.File.Path, &r.File.Size, &r.File.MTime, &r.File.ETag)
			return r, err
		})
}

// RunRanges streams the key ranges the given runs recorded, ordered by
// ctx, then run seq.
func (s *Store) RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error] {
	if len(runIDs) == 0 {
		return func(func(store.RangeRecord, error) bool) {}
	}
	return stream(ctx, s, fmt.Sprintf("listing ranges of job %q runs %v", job, runIDs), `
		SELECT g.ctx, g.run_id, g.range, g.rows FROM ranges g
		JOIN runs r ON r.job = g.job AND r.run_id = g.run_id
		WHERE g.job = $1 AND g.run_id = ANY($2::text[])
		ORDER BY g.ctx, r.seq`, []any{job, runIDs},
		func(rows pgx.Rows) (r store.RangeRecord, err error) {
			err = rows.Scan(&r.Ctx, &r.RunID, &r.Range, &r.Rows)
			return r, err
		})
}
