package sqltable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/sink"
)

// Publish moves the run's staged rows into the target and writes its
// marker row in _tidemark_runs, in one transaction: append inserts,
// overwrite deletes every row first, merge upserts on the merge keys. If
// the marker already exists the run was published and Publish only drops
// the staging table, so it can be repeated any number of times (roll
// forward after a crash). A run with neither marker nor staging table
// cannot be published: that is an error.
func (k *Sink) Publish(ctx context.Context, job, runID string) error {
	return k.PublishKnown(ctx, job, runID, "", nil)
}

// NotOwnerError is PublishKnown's refusal when the table's ownership row
// names another state store than the publishing one.
type NotOwnerError struct{ Owner Owner }

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("the table belongs to the state store %s (id %s)", e.Owner.StateStore, e.Owner.StateStoreID)
}

// ErrNewerRun is returned (wrapped in a *NewerRunError) by PublishKnown
// when the table holds rows of a run of the job that the publishing state
// does not know, loaded after the newest run it knows.
var ErrNewerRun = errors.New("the table holds rows of a newer run of the job that this state has no record of")

// NewerRunError is PublishKnown's refusal: Run is the newest marker's run.
type NewerRunError struct{ Run string }

func (e *NewerRunError) Error() string { return fmt.Sprintf("%v (run %s)", ErrNewerRun, e.Run) }
func (e *NewerRunError) Unwrap() error { return ErrNewerRun }

// PublishKnown is Publish that first checks, in the publishing transaction
// and under a lock that other publishers of the table take too, that the
// table's ownership row names the publishing state store storeID (a
// *NotOwnerError if it names another: a claim of that store took the
// table over after this run claimed it). A table without the row (loaded
// by an older tidemark) is checked by its markers: the newest marker of
// the job must be of a run known (the state has a record of it): a run of another state store of the job (a `tidemark state copy`
// of this one, or this one's original) that loaded after the newest run
// this state knows means that store runs the job now, and its bookmark
// reads this run's input itself. A table holding no marker this state
// knows (a history adopted with --adopt-sink, or a new one) is not
// refused: the run's claim checked it. known nil checks nothing.
func (k *Sink) PublishKnown(ctx context.Context, job, runID, storeID string, known func(ctx context.Context, runID string) (bool, error)) error {
	if err := k.ensureMeta(ctx); err != nil {
		return k.fail("publishing run "+runID, err)
	}
	if k.k == sqldb.MySQL { // DDL commits implicitly there (evolve.go)
		done, err := k.published(ctx, k.db, job, runID)
		if err == nil && !done {
			err = k.evolveTarget(ctx, k.db, runID)
		}
		if err != nil {
			return k.fail("publishing run "+runID, err)
		}
	}
	err := k.inTx(ctx, func(tx *sql.Tx) error {
		if known != nil {
			if err := k.lockMarkers(ctx, tx, job); err != nil {
				return err
			}
		}
		done, err := k.published(ctx, tx, job, runID)
		if err != nil || done {
			return err
		}
		if known != nil {
			o, ok, err := k.readOwner(ctx, tx, job)
			switch {
			case err != nil:
				return err
			case ok && o.StateStoreID != storeID:
				return &NotOwnerError{Owner: o}
			case !ok:
				if err := k.checkNewest(ctx, tx, job, known); err != nil {
					return err
				}
			}
		}
		if k.k == sqldb.Postgres {
			if err := k.evolveTarget(ctx, tx, runID); err != nil {
				return err
			}
		}
		stageCols, err := k.tableColumns(ctx, tx, k.meta(k.stageName(runID)))
		if err != nil {
			return err
		}
		if stageCols == nil {
			return fmt.Errorf("nothing is staged for run %s (no table %s) and it was never published: %w", runID, k.stageName(runID), sink.ErrOutputLost)
		}
		cols := slices.DeleteFunc(stageCols, func(c string) bool { return c == "_tidemark_seq" })
		targetCols, err := k.tableColumns(ctx, tx, k.target)
		if err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+k.stageSQL(runID)).Scan(&n); err != nil {
			return err
		}
		if k.cfg.mode() == "overwrite" {
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+k.targetSQL()); err != nil {
				return fmt.Errorf("emptying the table (mode overwrite): %w", err)
			}
		}
		if len(cols) > 0 && n > 0 && k.appliesChanges(cols) {
			if err := k.applyDeletes(ctx, tx, runID, cols); err != nil {
				return err
			}
		}
		if len(cols) > 0 && n > 0 {
			if _, err := tx.ExecContext(ctx, k.insertSQL(runID, cols, slices.Contains(targetCols, RunColumn))); err != nil {
				return fmt.Errorf("moving %d staged rows in (mode %s): %w", n, k.cfg.mode(), err)
			}
		}
		ins := "INSERT INTO " + k.qn(k.meta(runsTable)) + " (job, run_id, sink, target_table, row_count) VALUES (" +
			k.ph(1) + ", " + k.ph(2) + ", " + k.ph(3) + ", " + k.ph(4) + ", " + k.ph(5) + ")"
		if _, err := tx.ExecContext(ctx, ins, job, runID, k.cfg.Ctx, k.target.String(), n); err != nil {
			return fmt.Errorf("writing the run's marker: %w", err)
		}
		return nil
	})
	var newer *NewerRunError
	var notOwner *NotOwnerError
	if errors.As(err, &newer) || errors.As(err, &notOwner) {
		return err
	}
	if err != nil {
		return k.fail("publishing run "+runID, err)
	}
	if err := k.dropStage(ctx, runID); err != nil {
		return k.fail("dropping the staging table of published run "+runID, err)
	}
	return nil
}

// lockMarkers makes publishers of the job into the table take turns from
// here to the end of tx, so that the marker check and the marker insert of
// one are not interleaved with another's: PostgreSQL locks the markers
// table against other writers; MySQL locks the job's marker rows and the
// gaps between them (InnoDB next-key locks); SQLite runs one write
// transaction at a time, and one that read before another committed fails
// to write.
func (k *Sink) lockMarkers(ctx context.Context, tx *sql.Tx, job string) error {
	var q string
	switch k.k {
	case sqldb.Postgres:
		q = "LOCK TABLE " + k.qn(k.meta(runsTable)) + " IN SHARE ROW EXCLUSIVE MODE"
	case sqldb.MySQL:
		q = "SELECT run_id FROM " + k.qn(k.meta(runsTable)) + " WHERE job = " + k.ph(1) + " FOR UPDATE"
	default:
		return nil
	}
	var args []any
	if k.k == sqldb.MySQL {
		args = append(args, job)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("locking the markers of job %q: %w", job, err)
	}
	return rows.Close()
}

// checkNewest returns a *NewerRunError when the job's markers for this
// sink and table, newest first, begin with runs known does not know and
// then name one it knows.
func (k *Sink) checkNewest(ctx context.Context, tx *sql.Tx, job string, known func(ctx context.Context, runID string) (bool, error)) error {
	rows, err := tx.QueryContext(ctx, "SELECT run_id FROM "+k.qn(k.meta(runsTable))+" WHERE job = "+k.ph(1)+
		" AND sink = "+k.ph(2)+" AND target_table = "+k.ph(3)+" ORDER BY published_at DESC, run_id DESC",
		job, k.cfg.Ctx, k.target.String())
	if err != nil {
		return fmt.Errorf("reading markers: %w", err)
	}
	defer rows.Close()
	newest := ""
	for rows.Next() { // most often the first is known: one look-up
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("reading markers: %w", err)
		}
		if newest == "" {
			newest = id
		}
		ok, err := known(ctx, id)
		if err != nil {
			return err
		}
		if ok && id == newest {
			return nil
		}
		if ok {
			return &NewerRunError{Run: newest}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading markers: %w", err)
	}
	return nil
}

// insertSQL moves the stage into the target by the sink's mode.
func (k *Sink) insertSQL(runID string, cols []string, runCol bool) string {
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = k.q(c)
	}
	into, sel := slices.Clone(quoted), slices.Clone(quoted)
	if runCol {
		into = append(into, k.q(RunColumn))
		sel = append(sel, k.lit(runID))
	}
	head := "INSERT INTO " + k.targetSQL() + " (" + strings.Join(into, ", ") + ") "
	seq := k.q("_tidemark_seq")
	if k.cfg.mode() != "merge" {
		return head + "SELECT " + strings.Join(sel, ", ") + " FROM " + k.stageSQL(runID) + " ORDER BY " + seq
	}
	var updates []string
	for i, c := range into {
		if i < len(cols) && slices.Contains(k.cfg.MergeKeys, cols[i]) {
			continue
		}
		if k.k == sqldb.Postgres {
			updates = append(updates, c+" = EXCLUDED."+c)
		} else {
			updates = append(updates, c+" = VALUES("+c+")")
		}
	}
	keys := k.quoteList(k.cfg.MergeKeys)
	if k.appliesChanges(cols) {
		// Change rows: each key's last change, unless a delete.
		s := head + "SELECT " + strings.Join(sel, ", ") + " FROM (" + k.lastChanges(runID, cols) + ") s WHERE " + k.lastKept()
		if k.k == sqldb.Postgres {
			s += " ON CONFLICT (" + keys + ") DO "
			if len(updates) == 0 {
				return s + "NOTHING"
			}
			return s + "UPDATE SET " + strings.Join(updates, ", ")
		}
		s += " ON DUPLICATE KEY UPDATE "
		if len(updates) == 0 {
			return s + k.q(k.cfg.MergeKeys[0]) + " = " + k.q(k.cfg.MergeKeys[0])
		}
		return s + strings.Join(updates, ", ")
	}
	if k.k == sqldb.Postgres {
		// One row per key (the last staged wins): ON CONFLICT cannot touch
		// a row twice in one statement.
		s := head + "SELECT DISTINCT ON (" + keys + ") " + strings.Join(sel, ", ") + " FROM " + k.stageSQL(runID) +
			" ORDER BY " + keys + ", " + seq + " DESC ON CONFLICT (" + keys + ") DO "
		if len(updates) == 0 {
			return s + "NOTHING"
		}
		return s + "UPDATE SET " + strings.Join(updates, ", ")
	}
	// MySQL applies the rows in order: the last staged wins.
	s := head + "SELECT " + strings.Join(sel, ", ") + " FROM " + k.stageSQL(runID) + " ORDER BY " + seq + " ON DUPLICATE KEY UPDATE "
	if len(updates) == 0 {
		return s + k.q(k.cfg.MergeKeys[0]) + " = " + k.q(k.cfg.MergeKeys[0])
	}
	return s + strings.Join(updates, ", ")
}

// published reports whether the run's marker exists.
func (k *Sink) published(ctx context.Context, q sqlQuerier, job, runID string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+k.qn(k.meta(runsTable))+" WHERE job = "+k.ph(1)+
		" AND run_id = "+k.ph(2)+" AND sink = "+k.ph(3), job, runID, k.cfg.Ctx).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// LastRun returns the run of job whose marker for this sink and target
// was published last, "" when there is none: what the job's state must
// know of for its history to be the table's. Runs of a job publish one
// after another (a run rolls earlier ones forward first), so the marker's
// publish time orders them; run ids would not within one second, where
// they sort by their random part.
func (k *Sink) LastRun(ctx context.Context, job string) (string, error) {
	if err := k.ensureMeta(ctx); err != nil {
		return "", k.fail("reading markers", err)
	}
	var id string
	err := k.db.QueryRowContext(ctx, "SELECT run_id FROM "+k.qn(k.meta(runsTable))+" WHERE job = "+k.ph(1)+
		" AND sink = "+k.ph(2)+" AND target_table = "+k.ph(3)+" ORDER BY published_at DESC, run_id DESC LIMIT 1",
		job, k.cfg.Ctx, k.target.String()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", k.fail("reading markers", err)
	}
	return id, nil
}

// Published reports whether the run's marker exists in the target's
// schema: the run's rows are in the table (or were, and were purged).
func (k *Sink) Published(ctx context.Context, job, runID string) (bool, error) {
	if err := k.ensureMeta(ctx); err != nil {
		return false, k.fail("reading markers", err)
	}
	ok, err := k.published(ctx, k.db, job, runID)
	if err != nil {
		return false, k.fail("reading the marker of run "+runID, err)
	}
	return ok, nil
}

// Purge deletes the rows the run loaded (those whose RunColumn names it),
// its marker and its staging table, in one transaction, and returns the
// rows deleted. See the package comment for what each mode can undo. It
// is idempotent; a run never published purges nothing.
func (k *Sink) Purge(ctx context.Context, job, runID string) (int64, error) {
	if err := k.ensureMeta(ctx); err != nil {
		return 0, k.fail("purging run "+runID, err)
	}
	var n int64
	err := k.inTx(ctx, func(tx *sql.Tx) error {
		cols, err := k.tableColumns(ctx, tx, k.target)
		if err != nil {
			return err
		}
		if cols != nil && slices.Contains(cols, RunColumn) {
			res, err := tx.ExecContext(ctx, "DELETE FROM "+k.targetSQL()+" WHERE "+k.q(RunColumn)+" = "+k.ph(1), runID)
			if err != nil {
				return err
			}
			n, _ = res.RowsAffected()
		} else if cols != nil {
			done, err := k.published(ctx, tx, job, runID)
			if err != nil {
				return err
			}
			if done {
				return ErrNoRunColumn
			}
		}
		_, err = tx.ExecContext(ctx, "DELETE FROM "+k.qn(k.meta(runsTable))+" WHERE job = "+k.ph(1)+
			" AND run_id = "+k.ph(2)+" AND sink = "+k.ph(3), job, runID, k.cfg.Ctx)
		return err
	})
	if err != nil {
		return 0, k.fail("purging run "+runID, err)
	}
	if err := k.dropStage(ctx, runID); err != nil {
		return n, k.fail("dropping the staging table of run "+runID, err)
	}
	return n, nil
}

// Cleanup drops the staging tables of this sink whose run keep rejects:
// runs that never committed (keep returns true for runs committed but not
// yet published, whose stages a roll-forward still needs).
func (k *Sink) Cleanup(ctx context.Context, keep func(runID string) bool) error {
	if err := k.ensureMeta(ctx); err != nil {
		return k.fail("cleaning up", err)
	}
	rows, err := k.db.QueryContext(ctx, "SELECT run_id FROM "+k.qn(k.meta(stagesTable))+" WHERE sink = "+k.ph(1)+
		" AND target_table = "+k.ph(2), k.cfg.Ctx, k.target.String())
	if err != nil {
		return k.fail("listing staging tables", err)
	}
	var runs []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			rows.Close()
			return k.fail("listing staging tables", err)
		}
		runs = append(runs, r)
	}
	rows.Close()
	for _, r := range runs {
		if keep(r) {
			continue
		}
		if err := k.dropStage(ctx, r); err != nil {
			return k.fail("dropping the staging table of run "+r, err)
		}
	}
	return nil
}

// dropStage drops a run's staging table and forgets it.
func (k *Sink) dropStage(ctx context.Context, runID string) error {
	if _, err := k.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+k.stageSQL(runID)); err != nil {
		return err
	}
	_, err := k.db.ExecContext(ctx, "DELETE FROM "+k.qn(k.meta(stagesTable))+" WHERE stage_table = "+k.ph(1), k.stageName(runID))
	return err
}

// inTx runs fn in a transaction, committing when it returns nil.
func (k *Sink) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := k.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
