package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

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
