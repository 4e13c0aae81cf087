package sqltable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// ownersTable holds, per job, sink and target table, the state store that
// owns the table: the one whose runs may load into it and whose reset may
// purge it. The markers alone cannot say it: after `tidemark state copy`
// both stores know every marker until the copy's first load.
const ownersTable = "_tidemark_owners"

// Owner is a table's ownership row for one job and sink.
type Owner struct {
	StateStoreID string
	StateStore   string // where the store was, for people
	// Version is the owning store's bookmark version when it claimed the
	// table (or the version a reset that purged it committed): a store
	// at an older version (one copied before that reset) is refused.
	Version int64
	// ClaimedBy is the run that claimed the table for the store ("" when
	// a reset took it over): a store that knows it holds the history the
	// row was made in.
	ClaimedBy string
}

// ensureOwners creates the ownership table when missing.
func (k *Sink) ensureOwners(ctx context.Context) error {
	stmt := `CREATE TABLE IF NOT EXISTS ` + k.qn(k.meta(ownersTable)) + ` (job text NOT NULL, sink text NOT NULL,
		target_table text NOT NULL, state_store_id text NOT NULL, state_store text NOT NULL, version bigint NOT NULL,
		claimed_by text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (job, sink, target_table))`
	if k.k == sqldb.MySQL {
		stmt = `CREATE TABLE IF NOT EXISTS ` + k.qn(k.meta(ownersTable)) + ` (job varchar(191) NOT NULL,
			sink varchar(191) NOT NULL, target_table varchar(255) NOT NULL, state_store_id varchar(191) NOT NULL,
			state_store varchar(1000) NOT NULL, version bigint NOT NULL, claimed_by varchar(64) NOT NULL,
			updated_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (job, sink, target_table))
			CHARACTER SET utf8mb4`
	}
	if _, err := k.db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("creating tidemark's bookkeeping tables: %w", err)
	}
	return nil
}

// readOwner reads the job's ownership row of this sink and table in tx,
// locked until tx ends; ok is false when there is none (a table loaded by
// an older tidemark, or not yet claimed).
func (k *Sink) readOwner(ctx context.Context, tx *sql.Tx, job string) (Owner, bool, error) {
	var o Owner
	err := tx.QueryRowContext(ctx, "SELECT state_store_id, state_store, version, claimed_by FROM "+
		k.qn(k.meta(ownersTable))+" WHERE job = "+k.ph(1)+" AND sink = "+k.ph(2)+" AND target_table = "+k.ph(3)+
		" FOR UPDATE", job, k.cfg.Ctx, k.target.String()).Scan(&o.StateStoreID, &o.StateStore, &o.Version, &o.ClaimedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return Owner{}, false, nil
	}
	if err != nil {
		return Owner{}, false, fmt.Errorf("reading the table's ownership row: %w", err)
	}
	return o, true, nil
}

// writeOwner replaces (or makes) the job's ownership row in tx.
func (k *Sink) writeOwner(ctx context.Context, tx *sql.Tx, job string, o Owner) error {
	del := "DELETE FROM " + k.qn(k.meta(ownersTable)) + " WHERE job = " + k.ph(1) + " AND sink = " + k.ph(2) +
		" AND target_table = " + k.ph(3)
	if _, err := tx.ExecContext(ctx, del, job, k.cfg.Ctx, k.target.String()); err != nil {
		return fmt.Errorf("writing the table's ownership row: %w", err)
	}
	ins := "INSERT INTO " + k.qn(k.meta(ownersTable)) + " (job, sink, target_table, state_store_id, state_store, " +
		"version, claimed_by) VALUES (" + k.ph(1) + ", " + k.ph(2) + ", " + k.ph(3) + ", " + k.ph(4) + ", " + k.ph(5) +
		", " + k.ph(6) + ", " + k.ph(7) + ")"
	if _, err := tx.ExecContext(ctx, ins, job, k.cfg.Ctx, k.target.String(), o.StateStoreID, o.StateStore, o.Version,
		o.ClaimedBy); err != nil {
		return fmt.Errorf("writing the table's ownership row: %w", err)
	}
	return nil
}

// WithOwner runs fn on the job's ownership row in one transaction, with
// the publishers, claims and purges of the job into the table taking
// turns (lockMarkers); fn returns the row to write, or nil to write
// nothing. An error of fn rolls everything back.
func (k *Sink) WithOwner(ctx context.Context, job string, fn func(o Owner, ok bool) (*Owner, error)) error {
	if err := k.ensureMeta(ctx); err != nil {
		return k.fail("reading the ownership row", err)
	}
	return k.inTx(ctx, func(tx *sql.Tx) error {
		if err := k.lockMarkers(ctx, tx, job); err != nil {
			return err
		}
		o, ok, err := k.readOwner(ctx, tx, job)
		if err != nil {
			return err
		}
		w, err := fn(o, ok)
		if err != nil || w == nil {
			return err
		}
		return k.writeOwner(ctx, tx, job, *w)
	})
}
