package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

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
