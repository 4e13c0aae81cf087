package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/jackc/pgx/v5"

	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// outputColumns is the column list scanOutput expects.
const outputColumns = `o.run_id, o.sink, o.root, o.staged, o.final, o.rows, o.bytes, o.published, o.kind, o.upload_id, o.target, o.rejects`

// scanOutput reads one row of outputColumns.
func scanOutput(rows pgx.Rows) (store.Output, error) { return scanOutputRow(rows) }

// scanOutputRow reads one row of outputColumns from a row or rows.
func scanOutputRow(rows interface{ Scan(...any) error }) (store.Output, error) {
	var o store.Output
	var kind string
	var target []byte
	if err := rows.Scan(&o.RunID, &o.Sink, &o.Root, &o.Staged, &o.Final, &o.Rows, &o.Bytes, &o.Published,
		&kind, &o.UploadID, &target, &o.Rejects); err != nil {
		return store.Output{}, err
	}
	o.Kind = manifest.Kind(kind)
	if target != nil {
		o.Table = &manifest.Table{}
		if err := json.Unmarshal(target, o.Table); err != nil {
			return store.Output{}, fmt.Errorf("decoding the table target of output %s: %w", o.Final, err)
		}
	}
	return o, nil
}

// Outputs returns a run's outputs ordered by sink, then Final (byte order).
func (s *Store) Outputs(ctx context.Context, job, runID string) ([]store.Output, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+outputColumns+` FROM outputs o
		WHERE o.job = $1 AND o.run_id = $2 ORDER BY o.sink, o.final`, job, runID)
	if err == nil {
		var outs []store.Output
		outs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Output, error) { return scanOutputRow(row) })
		if err == nil {
			return outs, nil
		}
	}
	return nil, s.fail(fmt.Sprintf("listing outputs of run %s of job %q", runID, job), err)
}

// Actions returns a run's publish actions in the order they were committed.
func (s *Store) Actions(ctx context.Context, job, runID string) ([]store.SinkAction, error) {
	rows, err := s.pool.Query(ctx, `SELECT sink, root, mode, partitions FROM actions WHERE job = $1 AND run_id = $2 ORDER BY n`, job, runID)
	if err == nil {
		var acts []store.SinkAction
		acts, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.SinkAction, error) {
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
		})
		if err == nil {
			return acts, nil
		}
	}
	return nil, s.fail(fmt.Sprintf("listing actions of run %s of job %q", runID, job), err)
}

// Unpublished returns the succeeded, not undone runs, oldest first, that
// have an output not yet published. It starts from the partial index
// outputs_unpublished, which holds only what is left to publish, so it
// reads a handful of rows however many runs the job has.
func (s *Store) Unpublished(ctx context.Context, job string) ([]store.Run, error) {
	runs, err := queryRuns(ctx, s.pool, `
		SELECT `+runColumns+` FROM runs
		WHERE job = $1 AND status = 'succeeded' AND NOT undone
		  AND run_id IN (SELECT o.run_id FROM outputs o WHERE o.job = $1 AND NOT o.published)
		ORDER BY seq`, job)
	if err != nil {
		return nil, s.fail(fmt.Sprintf("listing unpublished runs of job %q", job), err)
	}
	return runs, nil
}

// MarkPublished marks all of a run's outputs published. Idempotent.
func (s *Store) MarkPublished(ctx context.Context, job string, token int64, runID string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		if err := lockLease(ctx, tx, job, token); err != nil {
			return err
		}
		if _, err := getRun(ctx, tx, job, runID, false); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE outputs SET published = true WHERE job = $1 AND run_id = $2 AND NOT published`, job, runID)
		return err
	})
	if err != nil {
		return s.fail(fmt.Sprintf("marking outputs of run %s of job %q published", runID, job), err)
	}
	return nil
}

// PublishedOutputs streams the published outputs at root of the job's
// succeeded, not purged runs (the outputs_root index), from one snapshot.
func (s *Store) PublishedOutputs(ctx context.Context, job, root string) iter.Seq2[store.Output, error] {
	return stream(ctx, s, fmt.Sprintf("listing published outputs of job %q at %s", job, root), `
		SELECT `+outputColumns+` FROM outputs o
		JOIN runs r ON r.job = o.job AND r.run_id = o.run_id
		WHERE o.job = $1 AND o.root = $2 AND o.published AND r.status = 'succeeded' AND NOT r.purged`,
		[]any{job, root}, scanOutput)
}
