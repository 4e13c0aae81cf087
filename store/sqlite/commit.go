package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/sqlstore"
)

// Commit makes c durable in one transaction: it checks the fencing token
// and (with Advance) the base version, writes the new bookmark version with
// the full set of source states and the file records, finishes the run
// record, stores the outputs and actions and applies the catalog changes.
// On any error nothing changed.
//
// The run must be running: begun with BeginRun, or unknown, in which case
// Commit records it (for library users that skip BeginRun). Sources, Added
// and Superseded without Advance are refused rather than dropped.
func (s *Store) Commit(ctx context.Context, c store.Commit) (store.Head, error) {
	var h store.Head
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		h, err = commit(ctx, tx, c)
		return err
	})
	if err != nil {
		return store.Head{}, fmt.Errorf("committing run %s of job %q: %w", c.Run.RunID, c.Job, err)
	}
	return h, nil
}

// commit is Commit inside the write transaction.
func commit(ctx context.Context, tx *sql.Tx, c store.Commit) (store.Head, error) {
	if err := store.CheckCommit(&c); err != nil {
		return store.Head{}, err
	}
	if err := checkToken(ctx, tx, c.Job, c.Token); err != nil {
		return store.Head{}, err
	}
	h, err := sqlstore.ReadHead(ctx, sqlstore.SQL(tx), c.Job)
	if err != nil {
		return store.Head{}, err
	}
	if c.Advance && h.Version != c.BaseVersion {
		return store.Head{}, fmt.Errorf("planned against version %d, head is %d (run %s): %w",
			c.BaseVersion, h.Version, h.RunID, store.ErrVersionConflict)
	}

	run, err := getRun(ctx, tx, c.Job, c.Run.RunID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if run, err = insertRun(ctx, tx, c.Run); err != nil {
			return store.Head{}, err
		}
	case err != nil:
		return store.Head{}, err
	case run.Status != store.StatusRunning:
		return store.Head{}, fmt.Errorf("run already %s", run.Status)
	}

	now := time.Now()
	if c.Advance {
		h = store.Head{Job: c.Job, Version: c.BaseVersion + 1, RunID: c.Run.RunID, UpdatedAt: fromNanos(nanos(now))}
		if err := insertVersion(ctx, tx, h, store.KindCommit, ""); err != nil {
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

	finished := c.Run.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	sumRun := c.Run
	if sumRun.JobFile == "" {
		sumRun.JobFile = run.JobFile // recorded at BeginRun
	}
	sum, err := encodeSummary(sumRun)
	if err != nil {
		return store.Head{}, err
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE runs SET status = 'succeeded', finished_at = ?, summary = ?, version = ?, error = ''
		WHERE job = ? AND run_id = ?`, nanos(finished), sum, h.Version, c.Job, c.Run.RunID)
	if err != nil {
		return store.Head{}, err
	}
	if err := insertOutputs(ctx, tx, c.Job, c.Run.RunID, c.Outputs); err != nil {
		return store.Head{}, err
	}
	if err := insertActions(ctx, tx, c.Job, c.Run.RunID, c.Actions); err != nil {
		return store.Head{}, err
	}
	if err := applyCatalog(ctx, tx, c.Catalog, now); err != nil {
		return store.Head{}, fmt.Errorf("changing the catalog: %w", err)
	}
	return h, nil
}

// insertVersion records a new bookmark version of kind "commit" or
// "reset" (a rewind is a reset to a run), asked for by by.
func insertVersion(ctx context.Context, tx *sql.Tx, h store.Head, kind, by string) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO bookmark_versions (job, version, run_id, kind, created_at, requested_by) VALUES (?, ?, ?, ?, ?, ?)`,
		h.Job, h.Version, h.RunID, kind, nanos(h.UpdatedAt), by)
	if err != nil {
		return fmt.Errorf("writing version %d: %w", h.Version, err)
	}
	return nil
}

// insertStates writes the source states of a version, in ctx order.
func insertStates(ctx context.Context, tx *sql.Tx, job string, version int64, states map[string]bookmark.SourceState) error {
	for _, srcCtx := range slices.Sorted(maps.Keys(states)) {
		data, err := sqlstore.EncodeState(states[srcCtx])
		if err != nil {
			return fmt.Errorf("encoding state of source %q: %w", srcCtx, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO source_states (job, version, ctx, state) VALUES (?, ?, ?, ?)`,
			job, version, srcCtx, data)
		if err != nil {
			return fmt.Errorf("writing state of source %q: %w", srcCtx, err)
		}
	}
	return nil
}

// supersede ends the current record of each path at version. Each record
// must be current: superseding a path the bookmark does not hold is a
// planner bug, and the commit is refused.
func supersede(ctx context.Context, tx *sql.Tx, job string, version int64, recs []store.FileRecord) error {
	if len(recs) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `
		UPDATE files SET removed_version = ?
		WHERE job = ? AND ctx = ? AND path = ? AND removed_version IS NULL`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range recs {
		res, err := stmt.ExecContext(ctx, version, job, r.Ctx, r.File.Path)
		if err != nil {
			return fmt.Errorf("superseding %s in source %q: %w", r.File.Path, r.Ctx, err)
		}
		if err := mustAffect(res, errors.New("no current record")); err != nil {
			return fmt.Errorf("superseding %s in source %q: %w", r.File.Path, r.Ctx, err)
		}
	}
	return nil
}

// insertFiles records the files a run added at version, with one prepared
// statement (100k records take about a second).
func insertFiles(ctx context.Context, tx *sql.Tx, job, runID string, version int64, recs []store.FileRecord) error {
	if len(recs) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `
		INSERT INTO files (job, ctx, path, size, mtime, etag, run_id, added_version)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range recs {
		_, err := stmt.ExecContext(ctx, job, r.Ctx, r.File.Path, r.File.Size, r.File.MTime, r.File.ETag, runID, version)
		if err != nil {
			return fmt.Errorf("recording %s in source %q: %w", r.File.Path, r.Ctx, err)
		}
	}
	return nil
}

// insertOutputs records a run's output manifest.
func insertOutputs(ctx context.Context, tx *sql.Tx, job, runID string, outs []store.Output) error {
	for _, o := range outs {
		if o.RunID != "" && o.RunID != runID {
			return fmt.Errorf("output %s names run %s", o.Final, o.RunID)
		}
		target := ""
		if o.Table != nil {
			b, err := json.Marshal(o.Table)
			if err != nil {
				return err
			}
			target = string(b)
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO outputs (job, run_id, sink, root, staged, final, rows, bytes, published, kind, upload_id, target, rejects)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			job, runID, o.Sink, o.Root, o.Staged, o.Final, o.Rows, o.Bytes, boolInt(o.Published),
			string(o.Kind), o.UploadID, target, o.Rejects)
		if err != nil {
			return fmt.Errorf("recording output %s of sink %q: %w", o.Final, o.Sink, err)
		}
	}
	return nil
}

// insertActions records a run's publish actions in order.
func insertActions(ctx context.Context, tx *sql.Tx, job, runID string, acts []store.SinkAction) error {
	for i, a := range acts {
		parts := a.Partitions
		if parts == nil {
			parts = []string{}
		}
		data, err := json.Marshal(parts)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO actions (job, run_id, n, sink, root, mode, partitions) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			job, runID, i, a.Sink, a.Root, a.Mode, string(data))
		if err != nil {
			return fmt.Errorf("recording %s action of sink %q: %w", a.Mode, a.Sink, err)
		}
	}
	return nil
}

// insertRanges records the key ranges a run read at version.
func insertRanges(ctx context.Context, tx *sql.Tx, job, runID string, version int64, rs []store.RangeRecord) error {
	for _, r := range rs {
		if r.RunID != "" && r.RunID != runID {
			return fmt.Errorf("range of source %q names run %s", r.Ctx, r.RunID)
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO ranges (job, ctx, run_id, range, rows, added_version) VALUES (?, ?, ?, ?, ?, ?)`,
			job, r.Ctx, runID, string(r.Range), r.Rows, version)
		if err != nil {
			return fmt.Errorf("recording the range of source %q: %w", r.Ctx, err)
		}
	}
	return nil
}
