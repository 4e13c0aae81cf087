package sqlite

import (
	"context"
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
	return func(yield func(store.FileRecord, error) bool) {
		fail := func(err error) {
			yield(store.FileRecord{}, fmt.Errorf("listing inputs of job %q runs %v: %w", job, runIDs, err))
		}
		if len(runIDs) == 0 {
			return
		}
		ids, err := json.Marshal(runIDs)
		if err != nil {
			fail(err)
			return
		}
		rows, err := s.db.QueryContext(ctx, `
			SELECT ctx, path, size, mtime, etag FROM files
			WHERE job = ? AND run_id IN (SELECT value FROM json_each(?))
			ORDER BY ctx, path, added_version`, job, string(ids))
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var r store.FileRecord
			if err := rows.Scan(&r.Ctx, &r.File.Path, &r.File.Size, &r.File.MTime, &r.File.ETag); err != nil {
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

// RunRanges streams the key ranges the given runs recorded, ordered by ctx,
// then run seq. Records of runs undone by a reset are gone.
func (s *Store) RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error] {
	return func(yield func(store.RangeRecord, error) bool) {
		fail := func(err error) {
			yield(store.RangeRecord{}, fmt.Errorf("listing ranges of job %q runs %v: %w", job, runIDs, err))
		}
		if len(runIDs) == 0 {
			return
		}
		ids, err := json.Marshal(runIDs)
		if err != nil {
			fail(err)
			return
		}
		rows, err := s.db.QueryContext(ctx, `
			SELECT g.ctx, g.run_id, g.range, g.rows FROM ranges g
			JOIN runs r ON r.job = g.job AND r.run_id = g.run_id
			WHERE g.job = ? AND g.run_id IN (SELECT value FROM json_each(?))
			ORDER BY g.ctx, r.seq`, job, string(ids))
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			var r store.RangeRecord
			var rng string
			if err := rows.Scan(&r.Ctx, &r.RunID, &rng, &r.Rows); err != nil {
				fail(err)
				return
			}
			r.Range = []byte(rng)
			if !yield(r, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	}
}
