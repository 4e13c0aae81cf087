package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// filesQuery walks the partial index files_current: rows come out in path
// order (BINARY collation, i.e. byte order) with no sort step.
const filesQuery = `
	SELECT path, size, mtime, etag FROM files
	WHERE job = ? AND ctx = ? AND removed_version IS NULL
	ORDER BY path`

// Files streams the current file records of one source ctx in byte order
// of Path, from one snapshot. The query starts when iteration does; breaking
// out of the loop closes it. A read error is yielded once, last.
func (s *Store) Files(ctx context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error] {
	return func(yield func(bookmark.File, error) bool) {
		rows, err := s.db.QueryContext(ctx, filesQuery, job, srcCtx)
		if err != nil {
			yield(bookmark.File{}, fmt.Errorf("listing files of job %q source %q: %w", job, srcCtx, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var f bookmark.File
			if err := rows.Scan(&f.Path, &f.Size, &f.MTime, &f.ETag); err != nil {
				yield(bookmark.File{}, fmt.Errorf("listing files of job %q source %q: %w", job, srcCtx, err))
				return
			}
			if !yield(f, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(bookmark.File{}, fmt.Errorf("listing files of job %q source %q: %w", job, srcCtx, err))
		}
	}
}

// RunInputs streams the file records the given runs added, superseded ones
// included, ordered by ctx, then path, then the version that added them.
// Records of runs undone by a reset are gone (the reset deleted them).
func (s *Store) RunInputs(ctx context.Context, job string, runIDs []string) iter.Seq2[store.FileRecord, error] {
	return queryByRuns(ctx, s, "inputs", job, runIDs, `
			SELECT ctx, path, size, mtime, etag FROM files
			WHERE job = ? AND run_id IN (SELECT value FROM json_each(?))
			ORDER BY ctx, path, added_version`,
		func(rows *sql.Rows) (r store.FileRecord, err error) {
			err = rows.Scan(&r.Ctx, &r.File.Path, &r.File.Size, &r.File.MTime, &r.File.ETag)
			return r, err
		})
}

// RunRanges streams the key ranges the given runs recorded, ordered by ctx,
// then run seq. Records of runs undone by a reset are gone.
func (s *Store) RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error] {
	return queryByRuns(ctx, s, "ranges", job, runIDs, `
			SELECT g.ctx, g.run_id, g.range, g.rows FROM ranges g
			JOIN runs r ON r.job = g.job AND r.run_id = g.run_id
			WHERE g.job = ? AND g.run_id IN (SELECT value FROM json_each(?))
			ORDER BY g.ctx, r.seq`,
		func(rows *sql.Rows) (r store.RangeRecord, err error) {
			var rng string
			err = rows.Scan(&r.Ctx, &r.RunID, &rng, &r.Rows)
			r.Range = []byte(rng)
			return r, err
		})
}

// queryByRuns streams the records query selects for the given runs of job
// (its two parameters: the job and the run ids as a JSON array), each
// read by scan; an error is yielded once, naming what was listed.
func queryByRuns[T any](ctx context.Context, s *Store, what, job string, runIDs []string, query string,
	scan func(*sql.Rows) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		fail := func(err error) {
			yield(zero, fmt.Errorf("listing %s of job %q runs %v: %w", what, job, runIDs, err))
		}
		if len(runIDs) == 0 {
			return
		}
		ids, err := json.Marshal(runIDs)
		if err != nil {
			fail(err)
			return
		}
		rows, err := s.db.QueryContext(ctx, query, job, string(ids))
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scan(rows)
			if err != nil {
				fail(err)
				return
			}
			if !yield(r, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	}
}
