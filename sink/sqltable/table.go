package sqltable

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// ensureMeta creates the marker and staging registry tables when missing.
func (k *Sink) ensureMeta(ctx context.Context) error {
	var stmts []string
	if k.k == sqldb.Postgres {
		stmts = []string{
			`CREATE TABLE IF NOT EXISTS ` + k.qn(k.meta(runsTable)) + ` (job text NOT NULL, run_id text NOT NULL,
				sink text NOT NULL, target_table text NOT NULL, row_count bigint NOT NULL,
				published_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (job, run_id, sink))`,
			`CREATE TABLE IF NOT EXISTS ` + k.qn(k.meta(stagesTable)) + ` (stage_table text PRIMARY KEY,
				run_id text NOT NULL, sink text NOT NULL, target_table text NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now())`,
		}
	} else {
		stmts = []string{
			`CREATE TABLE IF NOT EXISTS ` + k.qn(k.meta(runsTable)) + ` (job varchar(191) NOT NULL, run_id varchar(64) NOT NULL,
				sink varchar(191) NOT NULL, target_table varchar(400) NOT NULL, row_count bigint NOT NULL,
				published_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (job, run_id, sink))
				CHARACTER SET utf8mb4`,
			`CREATE TABLE IF NOT EXISTS ` + k.qn(k.meta(stagesTable)) + ` (stage_table varchar(64) NOT NULL PRIMARY KEY,
				run_id varchar(64) NOT NULL, sink varchar(191) NOT NULL, target_table varchar(400) NOT NULL,
				created_at datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) CHARACTER SET utf8mb4`,
		}
	}
	for _, s := range stmts {
		if _, err := k.db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("creating tidemark's bookkeeping tables: %w", err)
		}
	}
	return k.ensureOwners(ctx)
}

// tableColumns returns the columns of table n, nil when it does not exist.
func (k *Sink) tableColumns(ctx context.Context, q sqlQuerier, n sqldb.Name) ([]string, error) {
	var rows *sql.Rows
	var err error
	if k.k == sqldb.Postgres {
		rows, err = q.QueryContext(ctx, `SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1)
			AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, k.qn(n))
	} else {
		rows, err = q.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS
			WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, schemaArg(n), n.Table)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// sqlQuerier is *sql.DB or *sql.Tx.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaArg(n sqldb.Name) any {
	if n.Schema == "" {
		return nil
	}
	return n.Schema
}

// ensureTarget creates the target table from the output columns when it is
// missing (with RunColumn and, for merge, a unique index on the merge
// keys), or checks that the existing one has every output column (and,
// for merge, a unique index on exactly the merge keys).
func (k *Sink) ensureTarget(ctx context.Context, tg []target) error {
	cols, err := k.tableColumns(ctx, k.db, k.target)
	if err != nil {
		return fmt.Errorf("reading the table's columns: %w", err)
	}
	for _, key := range k.cfg.MergeKeys {
		if len(tg) == 0 && cols != nil {
			break // a run without output: nothing to merge into the table
		}
		if !slices.ContainsFunc(tg, func(t target) bool { return t.col.Name == key }) {
			return fmt.Errorf("merge key %s is not a column of the output", key)
		}
	}
	if cols == nil {
		if len(tg) == 0 {
			return fmt.Errorf("the table does not exist and the run has no output schema to create it from")
		}
		defs := make([]string, 0, len(tg)+1)
		for _, t := range tg {
			defs = append(defs, k.q(t.col.Name)+" "+t.ddl)
		}
		defs = append(defs, k.q(RunColumn)+" varchar(64)")
		stmt := "CREATE TABLE IF NOT EXISTS " + k.targetSQL() + " (" + strings.Join(defs, ", ")
		if k.cfg.Mode == "merge" {
			stmt += ", UNIQUE (" + k.quoteList(k.cfg.MergeKeys) + ")"
		}
		if k.k == sqldb.MySQL {
			stmt += ", INDEX (" + k.q(RunColumn) + ")) CHARACTER SET utf8mb4"
		} else {
			stmt += ")"
		}
		if _, err := k.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("creating the table: %w", err)
		}
		if k.k == sqldb.Postgres { // Purge finds a run's rows by it
			idx := "CREATE INDEX IF NOT EXISTS " + k.q(k.target.Table+"_tidemark_run") + " ON " + k.targetSQL() + " (" + k.q(RunColumn) + ")"
			if _, err := k.db.ExecContext(ctx, idx); err != nil {
				return fmt.Errorf("indexing %s: %w", RunColumn, err)
			}
		}
		return nil
	}
	var missing []string
	for _, t := range tg {
		if !slices.Contains(cols, t.col.Name) {
			missing = append(missing, t.col.Name)
		}
	}
	if len(missing) > 0 && !slices.Contains(cols, RunColumn) {
		// A table tidemark created gets them at publish (evolve.go).
		return fmt.Errorf("the table lacks output columns %s (it has %s; tidemark adds columns only to tables it created)",
			strings.Join(missing, ", "), strings.Join(cols, ", "))
	}
	if k.cfg.Mode == "merge" {
		ok, err := k.hasUniqueIndex(ctx, k.cfg.MergeKeys)
		if err != nil {
			return fmt.Errorf("reading the table's indexes: %w", err)
		}
		if !ok {
			return fmt.Errorf("mode merge needs a unique index on exactly the merge keys (%s); the table has none",
				strings.Join(k.cfg.MergeKeys, ", "))
		}
	}
	return nil
}

// hasUniqueIndex reports whether the target has a unique index (or
// primary key) on exactly keys, in any order.
func (k *Sink) hasUniqueIndex(ctx context.Context, keys []string) (bool, error) {
	var rows *sql.Rows
	var err error
	if k.k == sqldb.Postgres {
		rows, err = k.db.QueryContext(ctx, `SELECT i.indexrelid::text, a.attname FROM pg_index i
			JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL`, k.targetSQL())
	} else {
		rows, err = k.db.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
			WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND NON_UNIQUE = 0`, schemaArg(k.target), k.target.Table)
	}
	if err != nil {
		return false, err
	}
	defer rows.Close()
	idx := map[string][]string{}
	for rows.Next() {
		var name, col string
		if err := rows.Scan(&name, &col); err != nil {
			return false, err
		}
		idx[name] = append(idx[name], col)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	want := slices.Sorted(slices.Values(keys))
	for _, cols := range idx {
		slices.Sort(cols)
		if slices.Equal(cols, want) {
			return true, nil
		}
	}
	return false, nil
}

func (k *Sink) quoteList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = k.q(n)
	}
	return strings.Join(out, ", ")
}
