package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// outputColumns is the column list scanOutput expects.
const outputColumns = `o.run_id, o.sink, o.root, o.staged, o.final, o.rows, o.bytes, o.published, o.kind, o.upload_id, o.target, o.rejects`

// scanOutput reads one row of outputColumns.
func scanOutput(row Row) (store.Output, error) {
	var o store.Output
	var kind string
	var target []byte
	if err := row.Scan(&o.RunID, &o.Sink, &o.Root, &o.Staged, &o.Final, &o.Rows, &o.Bytes, &o.Published,
		&kind, &o.UploadID, &target, &o.Rejects); err != nil {
		return store.Output{}, err
	}
	return o, decodeOutput(&o, kind, target)
}

// Outputs returns a run's outputs ordered by sink, then Final (byte order).
func (c *Core) Outputs(ctx context.Context, job, runID string) ([]store.Output, error) {
	outs, err := queryAll(ctx, c.d.DB(), scanOutput, `SELECT `+outputColumns+` FROM outputs o
		WHERE o.job = ? AND o.run_id = ? ORDER BY o.sink, o.final`, job, runID)
	if err != nil {
		return nil, c.failf(err, "listing outputs of run %s of job %q", runID, job)
	}
	return outs, nil
}

// Actions returns a run's publish actions in the order they were committed.
func (c *Core) Actions(ctx context.Context, job, runID string) ([]store.SinkAction, error) {
	acts, err := queryAll(ctx, c.d.DB(), func(row Row) (store.SinkAction, error) {
		var a store.SinkAction
		var parts []byte
		if err := row.Scan(&a.Sink, &a.Root, &a.Mode, &parts); err != nil {
			return a, err
		}
		if err := json.Unmarshal(parts, &a.Partitions); err != nil {
			return a, fmt.Errorf("decoding partitions of %s action of sink %q: %w", a.Mode, a.Sink, err)
		}
		if len(a.Partitions) == 0 {
			a.Partitions = nil
		}
		return a, nil
	}, `SELECT sink, root, mode, partitions FROM actions WHERE job = ? AND run_id = ? ORDER BY n`, job, runID)
	if err != nil {
		return nil, c.failf(err, "listing actions of run %s of job %q", runID, job)
	}
	return acts, nil
}

// Unpublished returns the succeeded runs, oldest first, that have at least
// one output not yet published. Runs undone by a reset are left out: their
// input is read again after the reset, so publishing their output would
// duplicate it (store.RollsForward). It starts from the partial index outputs_unpublished,
// which holds only what is left to publish.
func (c *Core) Unpublished(ctx context.Context, job string) ([]store.Run, error) {
	runs, err := QueryRuns(ctx, c.d.DB(), `
		SELECT `+c.d.RunColumns()+` FROM runs
		WHERE job = ? AND status = 'succeeded' AND undone = `+c.d.Bool(false)+`
		  AND run_id IN (SELECT o.run_id FROM outputs o WHERE o.job = ? AND o.published = `+c.d.Bool(false)+`)
		ORDER BY seq`, job, job)
	if err != nil {
		return nil, c.failf(err, "listing unpublished runs of job %q", job)
	}
	return runs, nil
}

// PublishedOutputs streams the published outputs at root of the job's
// succeeded, not purged runs (store.PublishedAt), from one snapshot (one
// query over the job's outputs joined to runs).
func (c *Core) PublishedOutputs(ctx context.Context, job, root string) iter.Seq2[store.Output, error] {
	return stream(ctx, c, fmt.Sprintf("listing published outputs of job %q at %s", job, root), `
		SELECT `+outputColumns+` FROM outputs o
		JOIN runs r ON r.job = o.job AND r.run_id = o.run_id
		WHERE o.job = ? AND o.root = ? AND o.published = `+c.d.Bool(true)+` AND r.status = 'succeeded' AND r.purged = `+c.d.Bool(false),
		[]any{job, root}, scanOutput)
}

// stream yields the rows of query, each read by scan, through the
// dialect's Stream; an error is yielded once, last, with what it was
// doing. Breaking out of the loop ends the read.
func stream[T any](ctx context.Context, c *Core, what, query string, args []any, scan func(Row) (T, error)) iter.Seq2[T, error] {
	return Stream(func(each func(Row) (bool, error)) error { return c.d.Stream(ctx, query, args, each) },
		scan, func(err error) error { return c.d.Fail(what, err) })
}

// Stream turns a walk over rows into an iterator: walk calls each for
// every row until it returns false or an error; scan reads a row; fail
// wraps an error, which is yielded once, last. Breaking out of the loop
// ends the walk.
func Stream[T, R any](walk func(each func(R) (bool, error)) error, scan func(R) (T, error), fail func(error) error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		stopped := false
		err := walk(func(row R) (bool, error) {
			v, err := scan(row)
			if err != nil {
				return false, err
			}
			if !yield(v, nil) {
				stopped = true
				return false, nil
			}
			return true, nil
		})
		if err != nil && !stopped {
			var zero T
			yield(zero, fail(err))
		}
	}
}

// FilesQuery walks the partial index files_current: rows come out in path
// order (byte order: SQLite's BINARY collation, PostgreSQL's "C") with no
// sort step. Its parameters are the job and the source ctx.
const FilesQuery = `
	SELECT path, size, mtime, etag FROM files
	WHERE job = ? AND ctx = ? AND removed_version IS NULL
	ORDER BY path`

// Files streams the current file records of one source ctx in byte order
// of Path along the files_current index (no sort), from one snapshot.
func (c *Core) Files(ctx context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error] {
	return stream(ctx, c, fmt.Sprintf("listing files of job %q source %q", job, srcCtx), FilesQuery, []any{job, srcCtx},
		func(row Row) (f bookmark.File, err error) {
			err = row.Scan(&f.Path, &f.Size, &f.MTime, &f.ETag)
			return f, err
		})
}

// RunInputs streams the file records the given runs added, superseded ones
// included, ordered by ctx, then path, then the version that added them.
// Records of runs undone by a reset are gone (the reset deleted them).
func (c *Core) RunInputs(ctx context.Context, job string, runIDs []string) iter.Seq2[store.FileRecord, error] {
	if len(runIDs) == 0 {
		return func(func(store.FileRecord, error) bool) {}
	}
	in, arg := c.d.InRuns("run_id", runIDs)
	return stream(ctx, c, fmt.Sprintf("listing inputs of job %q runs %v", job, runIDs), `
		SELECT ctx, path, size, mtime, etag FROM files
		WHERE job = ? AND `+in+`
		ORDER BY ctx, path, added_version`, []any{job, arg},
		func(row Row) (r store.FileRecord, err error) {
			err = row.Scan(&r.Ctx, &r.File.Path, &r.File.Size, &r.File.MTime, &r.File.ETag)
			return r, err
		})
}

// RunRanges streams the key ranges the given runs recorded, ordered by
// ctx, then run seq. Records of runs undone by a reset are gone.
func (c *Core) RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error] {
	if len(runIDs) == 0 {
		return func(func(store.RangeRecord, error) bool) {}
	}
	in, arg := c.d.InRuns("g.run_id", runIDs)
	return stream(ctx, c, fmt.Sprintf("listing ranges of job %q runs %v", job, runIDs), `
		SELECT g.ctx, g.run_id, g.range, g.rows FROM ranges g
		JOIN runs r ON r.job = g.job AND r.run_id = g.run_id
		WHERE g.job = ? AND `+in+`
		ORDER BY g.ctx, r.seq`, []any{job, arg},
		func(row Row) (r store.RangeRecord, err error) {
			var rng []byte
			err = row.Scan(&r.Ctx, &r.RunID, &rng, &r.Rows)
			r.Range = rng
			return r, err
		})
}
