package sqltable

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Schema evolution of a target table tidemark created (one with
// RunColumn): a run whose output has a column the table lacks adds it
// (ALTER TABLE ... ADD COLUMN, nullable, so earlier rows hold NULL), and
// a column whose output type widens the table's (bookmark.Widens: int →
// bigint → double, anything → text) is widened (ALTER COLUMN ... TYPE /
// MODIFY COLUMN). On PostgreSQL that happens inside the publish
// transaction, so a failed publish leaves the table as it was. MySQL and
// MariaDB commit DDL implicitly, so there the columns are added just before
// the transaction: a publish that then fails leaves the new, empty,
// nullable columns, and its retry finds them in place. A table tidemark
// did not create is never altered: a column it lacks fails the run at
// Stage, naming the columns.

// columnTypes returns the columns of table n and their types as the
// database spells them, nil when the table does not exist.
func (k *Sink) columnTypes(ctx context.Context, q sqlQuerier, n sqldb.Name) ([]string, map[string]string, error) {
	var rows *sql.Rows
	var err error
	if k.k == sqldb.Postgres {
		rows, err = q.QueryContext(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, k.qn(n))
	} else {
		rows, err = q.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS
			WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, schemaArg(n), n.Table)
	}
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var names []string
	types := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		types[name] = typ
	}
	return names, types, rows.Err()
}

// evolveTarget adds to the target the staged columns it lacks and widens
// the columns whose staged type is wider; a table without RunColumn is
// left alone.
func (k *Sink) evolveTarget(ctx context.Context, q sqlQuerier, runID string) error {
	stageCols, stageTypes, err := k.columnTypes(ctx, q, k.meta(k.stageName(runID)))
	if err != nil || stageCols == nil {
		return err
	}
	cols, types, err := k.columnTypes(ctx, q, k.target)
	if err != nil || cols == nil || !slices.Contains(cols, RunColumn) {
		return err
	}
	for _, c := range stageCols {
		if c == "_tidemark_seq" {
			continue
		}
		have, ok := types[c]
		var stmt string
		switch {
		case !ok:
			stmt = "ALTER TABLE " + k.targetSQL() + " ADD COLUMN " + k.q(c) + " " + stageTypes[c]
		case widens(have, stageTypes[c]):
			if k.k == sqldb.Postgres {
				stmt = "ALTER TABLE " + k.targetSQL() + " ALTER COLUMN " + k.q(c) + " TYPE " + stageTypes[c] + " USING " + k.q(c) + "::" + stageTypes[c]
			} else {
				stmt = "ALTER TABLE " + k.targetSQL() + " MODIFY COLUMN " + k.q(c) + " " + stageTypes[c]
			}
		default:
			continue
		}
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("evolving the table for column %s: %w", c, err)
		}
	}
	return nil
}

// widens reports whether the database type to is a widening of from.
func widens(from, to string) bool {
	if strings.EqualFold(from, to) {
		return false
	}
	a, okA := dbType(from)
	b, okB := dbType(to)
	return okA && okB && !a.Equal(b) && bookmark.Widens(a, b)
}

// dbType reads a column type as PostgreSQL and MySQL spell it.
func dbType(s string) (bookmark.Type, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "text", "longtext", "mediumtext":
		return bookmark.Scalar(bookmark.Varchar), true
	case "int", "int(11)":
		return bookmark.Scalar(bookmark.Integer), true
	case "bigint(20)":
		return bookmark.Scalar(bookmark.BigInt), true
	}
	t, err := bookmark.ParseType(s)
	return t, err == nil && t.Kind != bookmark.Other
}
