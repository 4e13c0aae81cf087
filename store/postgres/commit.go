package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// Commit makes c durable in one transaction: it locks the job's lease row
// and checks the fencing token, compares the head with c.BaseVersion (with
// Advance), locks the run's row, writes the new version with its source
// states and file records, finishes the run record, stores the outputs and
// actions and applies the catalog changes. The only rows it locks are the
// job's own. On any error, a lost connection included, nothing changed.
//
// The run must be running: begun with BeginRun, or unknown, in which case
// Commit records it (for library users that skip BeginRun).
func (s *Store) Commit(ctx context.Context, c store.Commit) (store.Head, error) {
	var h store.Head
	err := s.write(ctx, func(tx pgx.Tx) error {
		var err error
		h, err = commit(ctx, tx, c)
		return err
	})
	if err != nil {
		return store.Head{}, s.fail(fmt.Sprintf("committing run %s of job %q", c.Run.RunID, c.Job), err)
	}
	return h, nil
}

// commit is Commit inside the transaction.
func commit(ctx context.Context, tx pgx.Tx, c store.Commit) (store.Head, error) {
	if err := store.CheckCommit(&c); err != nil {
		return store.Head{}, err
	}
	if err := lockLease(ctx, tx, c.Job, c.Token); err != nil {
		return store.Head{}, err
	}
	h, err := sqlstore.ReadHead(ctx, pgQ(tx), c.Job)
	if err != nil {
		return store.Head{}, err
	}
	if c.Advance && h.Version != c.BaseVersion {
		return store.Head{}, fmt.Errorf("planned against version %d, head is %d (run %s): %w",
			c.BaseVersion, h.Version, h.RunID, store.ErrVersionConflict)
	}
	run, err := getRun(ctx, tx, c.Job, c.Run.RunID, true)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if _, err = insertRun(ctx, tx, c.Run); err != nil {
			return store.Head{}, err
		}
	case err != nil:
		return store.Head{}, err
	case run.Status != store.StatusRunning:
		return store.Head{}, fmt.Errorf("run already %s", run.Status)
	}

	if c.Advance {
		h = store.Head{Job: c.Job, Version: c.BaseVersion + 1, RunID: c.Run.RunID}
		if h.UpdatedAt, err = insertVersion(ctx, tx, h, store.KindCommit, ""); err != nil {
			return store.Head{}, err
		}
		if err := insertStates(ctx, tx, c.Job, h.Version, c.Sources); err != nil {
			return store.Head{}, err
		}
		if err := supersede(ctx, tx, c.Job, h.Version, c.Superseded); err != nil {
			return store.Head{}, err
		}
		if err := insertFiles(ctx, tx, c.Job, c.Run.RunID, h.Version, c.Added); err != nil {
			return store.Head{}, err
		}
		if err := insertRanges(ctx, tx, c.Job, c.Run.RunID, h.Version, c.Ranges); err != nil {
			return store.Head{}, err
		}
	}
	sum, err := encodeSummary(c.Run)
	if err != nil {
		return store.Head{}, err
	}
	_, err = tx.Exec(ctx, `
		UPDATE runs SET status = 'succeeded', finished_at = coalesce($3, `+nowNS+`), summary = $4, version = $5, error = '',
			job_file = CASE WHEN $6 = '' THEN job_file ELSE $6 END, host = CASE WHEN $7 = '' THEN host ELSE $7 END
		WHERE job = $1 AND run_id = $2`, c.Job, c.Run.RunID, nsArg(c.Run.FinishedAt), sum, h.Version, c.Run.JobFile, c.Run.Host)
	if err != nil {
		return store.Head{}, fmt.Errorf("finishing the run record: %w", err)
	}
	if err := insertOutputs(ctx, tx, c.Job, c.Run.RunID, c.Outputs); err != nil {
		return store.Head{}, err
	}
	if err := insertActions(ctx, tx, c.Job, c.Run.RunID, c.Actions); err != nil {
		return store.Head{}, err
	}
	if err := applyCatalog(ctx, tx, c.Catalog); err != nil {
		return store.Head{}, err
	}
	return h, nil
}

// insertVersion records a new bookmark version of kind "commit" or "reset"
// (a rewind is a reset to a run), asked for by by, stamped by the
// database's clock.
func insertVersion(ctx context.Context, tx pgx.Tx, h store.Head, kind, by string) (time.Time, error) {
	var at int64
	err := tx.QueryRow(ctx, `
		INSERT INTO bookmark_versions (job, version, run_id, kind, created_at, requested_by)
		VALUES ($1, $2, $3, $4, `+nowNS+`, $5) RETURNING created_at`,
		h.Job, h.Version, h.RunID, kind, by).Scan(&at)
	if isCode(err, "23505") { // unique_violation: cannot happen under the lease row, but says so if it does
		return time.Time{}, fmt.Errorf("writing version %d: %w", h.Version, store.ErrVersionConflict)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("writing version %d: %w", h.Version, err)
	}
	return fromNS(&at), nil
}

// insertStates writes the source states of a version in one statement.
func insertStates(ctx context.Context, tx pgx.Tx, job string, version int64, states map[string]bookmark.SourceState) error {
	if len(states) == 0 {
		return nil
	}
	ctxs := slices.Sorted(maps.Keys(states))
	data := make([]string, len(ctxs))
	for i, c := range ctxs {
		b, err := json.Marshal(states[c])
		if err != nil {
			return fmt.Errorf("encoding state of source %q: %w", c, err)
		}
		data[i] = string(b)
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO source_states (job, version, ctx, state)
		SELECT $1, $2, c, s::json FROM unnest($3::text[], $4::text[]) AS u(c, s)`, job, version, ctxs, data)
	if err != nil {
		return fmt.Errorf("writing source states: %w", err)
	}
	return nil
}

// supersede ends the current record of each path at version, in one
// statement. Each record must be current: superseding a path the bookmark
// does not hold is a planner bug, and the commit is refused.
func supersede(ctx context.Context, tx pgx.Tx, job string, version int64, recs []store.FileRecord) error {
	if len(recs) == 0 {
		return nil
	}
	ctxs, paths := make([]string, len(recs)), make([]string, len(recs))
	for i, r := range recs {
		ctxs[i], paths[i] = r.Ctx, r.File.Path
	}
	rows, err := tx.Query(ctx, `
		WITH u AS (SELECT DISTINCT c, p FROM unnest($3::text[], $4::text[]) AS u(c, p))
		UPDATE files f SET removed_version = $2
		FROM u WHERE f.job = $1 AND f.ctx = u.c AND f.path = u.p AND f.removed_version IS NULL
		RETURNING f.ctx, f.path`, job, version, ctxs, paths)
	if err != nil {
		return fmt.Errorf("superseding file records: %w", err)
	}
	done := map[store.FileRecord]bool{}
	for rows.Next() {
		var r store.FileRecord
		if err := rows.Scan(&r.Ctx, &r.File.Path); err != nil {
			return fmt.Errorf("superseding file records: %w", err)
		}
		done[r] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("superseding file records: %w", err)
	}
	for _, r := range recs {
		if !done[store.FileRecord{Ctx: r.Ctx, File: bookmark.File{Path: r.File.Path}}] {
			return fmt.Errorf("superseding %s in source %q: no current record", r.File.Path, r.Ctx)
		}
	}
	return nil
}

// insertFiles records the files a run added at version with COPY (100k
// records in about a second).
func insertFiles(ctx context.Context, tx pgx.Tx, job, runID string, version int64, recs []store.FileRecord) error {
	if len(recs) == 0 {
		return nil
	}
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(recs) {
			return nil, nil
		}
		r := recs[i]
		i++
		return []any{job, r.Ctx, r.File.Path, r.File.Size, r.File.MTime, r.File.ETag, runID, version}, nil
	})
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"files"},
		[]string{"job", "ctx", "path", "size", "mtime", "etag", "run_id", "added_version"}, src)
	if isCode(err, "23505") {
		return fmt.Errorf("recording the files read: a path is recorded twice as current (add it to Superseded): %w", err)
	}
	if err != nil {
		return fmt.Errorf("recording the files read: %w", err)
	}
	return nil
}

// insertRanges records the key ranges a run read at version.
func insertRanges(ctx context.Context, tx pgx.Tx, job, runID string, version int64, rs []store.RangeRecord) error {
	for _, r := range rs {
		if r.RunID != "" && r.RunID != runID {
			return fmt.Errorf("range of source %q names run %s", r.Ctx, r.RunID)
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO ranges (job, ctx, run_id, range, rows, added_version) VALUES ($1, $2, $3, $4, $5, $6)`,
			job, r.Ctx, runID, r.Range, r.Rows, version)
		if err != nil {
			return fmt.Errorf("recording the range of source %q: %w", r.Ctx, err)
		}
	}
	return nil
}

// insertOutputs records a run's output manifest in one batch.
func insertOutputs(ctx context.Context, tx pgx.Tx, job, runID string, outs []store.Output) error {
	if len(outs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, o := range outs {
		if o.RunID != "" && o.RunID != runID {
			return fmt.Errorf("output %s names run %s", o.Final, o.RunID)
		}
		var target []byte
		if o.Table != nil {
			var err error
			if target, err = json.Marshal(o.Table); err != nil {
				return err
			}
		}
		b.Queue(`
			INSERT INTO outputs (job, run_id, sink, final, kind, root, staged, upload_id, target, rejects, rows, bytes, published)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			job, runID, o.Sink, o.Final, string(o.Kind), o.Root, o.Staged, o.UploadID, nullJSON(target), o.Rejects, o.Rows, o.Bytes, o.Published)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("recording the outputs: %w", err)
	}
	return nil
}

// nullJSON is a json parameter: NULL for no bytes.
func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// insertActions records a run's publish actions in order.
func insertActions(ctx context.Context, tx pgx.Tx, job, runID string, acts []store.SinkAction) error {
	if len(acts) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for i, a := range acts {
		parts := a.Partitions
		if parts == nil {
			parts = []string{}
		}
		data, err := json.Marshal(parts)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO actions (job, run_id, n, sink, root, mode, partitions) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			job, runID, i, a.Sink, a.Root, a.Mode, string(data))
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("recording the publish actions: %w", err)
	}
	return nil
}
