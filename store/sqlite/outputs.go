package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// Outputs returns a run's outputs ordered by sink, then Final (byte order).
func (s *Store) Outputs(ctx context.Context, job, runID string) ([]store.Output, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT run_id, sink, root, staged, final, rows, bytes, published, kind, upload_id, target, rejects FROM outputs
		WHERE job = ? AND run_id = ? ORDER BY sink, final`, job, runID)
	if err != nil {
		return nil, fmt.Errorf("listing outputs of run %s of job %q: %w", runID, job, err)
	}
	defer rows.Close()
	var outs []store.Output
	for rows.Next() {
		var o store.Output
		var published int64
		var kind, target string
		if err := rows.Scan(&o.RunID, &o.Sink, &o.Root, &o.Staged, &o.Final, &o.Rows, &o.Bytes, &published,
			&kind, &o.UploadID, &target, &o.Rejects); err != nil {
			return nil, fmt.Errorf("listing outputs of run %s of job %q: %w", runID, job, err)
		}
		o.Published = published != 0
		if err := decodeKind(&o, kind, target); err != nil {
			return nil, fmt.Errorf("listing outputs of run %s of job %q: %w", runID, job, err)
		}
		outs = append(outs, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing outputs of run %s of job %q: %w", runID, job, err)
	}
	return outs, nil
}

// Actions returns a run's publish actions in the order they were committed.
func (s *Store) Actions(ctx context.Context, job, runID string) ([]store.SinkAction, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT sink, root, mode, partitions FROM actions WHERE job = ? AND run_id = ? ORDER BY n`, job, runID)
	if err != nil {
		return nil, fmt.Errorf("listing actions of run %s of job %q: %w", runID, job, err)
	}
	defer rows.Close()
	var acts []store.SinkAction
	for rows.Next() {
		var a store.SinkAction
		var parts string
		if err := rows.Scan(&a.Sink, &a.Root, &a.Mode, &parts); err != nil {
			return nil, fmt.Errorf("listing actions of run %s of job %q: %w", runID, job, err)
		}
		if err := json.Unmarshal([]byte(parts), &a.Partitions); err != nil {
			return nil, fmt.Errorf("decoding partitions of %s action of sink %q, run %s of job %q: %w", a.Mode, a.Sink, runID, job, err)
		}
		if len(a.Partitions) == 0 {
			a.Partitions = nil
		}
		acts = append(acts, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing actions of run %s of job %q: %w", runID, job, err)
	}
	return acts, nil
}

// Unpublished returns the succeeded runs, oldest first, that have at least
// one output not yet published. Runs undone by a reset are left out: their
// input is read again after the reset, so publishing their output would
// duplicate it.
func (s *Store) Unpublished(ctx context.Context, job string) ([]store.Run, error) {
	runs, err := queryRuns(ctx, s.db, `
		SELECT `+runColumns+` FROM runs r
		WHERE job = ? AND status = 'succeeded' AND undone = 0
		  AND EXISTS (SELECT 1 FROM outputs o WHERE o.job = r.job AND o.run_id = r.run_id AND o.published = 0)
		ORDER BY seq`, job)
	if err != nil {
		return nil, fmt.Errorf("listing unpublished runs of job %q: %w", job, err)
	}
	return runs, nil
}

// MarkPublished marks all of a run's outputs published. Idempotent;
// store.ErrNotFound for an unknown run. token must be the job's current
// lease token.
func (s *Store) MarkPublished(ctx context.Context, job string, token int64, runID string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := checkToken(ctx, tx, job, token); err != nil {
			return err
		}
		if _, err := getRun(ctx, tx, job, runID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE outputs SET published = 1 WHERE job = ? AND run_id = ? AND published = 0`, job, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("marking outputs of run %s of job %q published: %w", runID, job, err)
	}
	return nil
}

// PublishedOutputs streams the published outputs at root of the job's
// succeeded, not purged runs, from one snapshot (one query over the job's
// rows of outputs joined to runs).
func (s *Store) PublishedOutputs(ctx context.Context, job, root string) iter.Seq2[store.Output, error] {
	return func(yield func(store.Output, error) bool) {
		fail := func(err error) {
			yield(store.Output{}, fmt.Errorf("listing published outputs of job %q at %s: %w", job, root, err))
		}
		rows, err := s.db.QueryContext(ctx, `
			SELECT o.run_id, o.sink, o.root, o.staged, o.final, o.rows, o.bytes, o.kind, o.upload_id, o.target, o.rejects FROM outputs o
			JOIN runs r ON r.job = o.job AND r.run_id = o.run_id
			WHERE o.job = ? AND o.root = ? AND o.published = 1 AND r.status = 'succeeded' AND r.purged = 0`, job, root)
		if err != nil {
			fail(err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			o := store.Output{Published: true}
			var kind, target string
			if err := rows.Scan(&o.RunID, &o.Sink, &o.Root, &o.Staged, &o.Final, &o.Rows, &o.Bytes,
				&kind, &o.UploadID, &target, &o.Rejects); err != nil {
				fail(err)
				return
			}
			if err := decodeKind(&o, kind, target); err != nil {
				fail(err)
				return
			}
			if !yield(o, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			fail(err)
		}
	}
}

// decodeKind sets an output's kind and table target from their columns.
func decodeKind(o *store.Output, kind, target string) error {
	o.Kind = manifest.Kind(kind)
	if target == "" {
		return nil
	}
	o.Table = &manifest.Table{}
	if err := json.Unmarshal([]byte(target), o.Table); err != nil {
		return fmt.Errorf("decoding the table target of output %s: %w", o.Final, err)
	}
	return nil
}
