package sqltable

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// Change rows (a source with changes: log) carry these columns; a merge
// sink whose output has OpColumn applies them: per merge key the last
// change of the run wins, in commit order (LSNColumn, then SeqColumn,
// then the output's order), a D deleting the row with its merge keys and
// an I or U upserting it.
const (
	OpColumn  = "_op"
	lsnColumn = "_lsn"
	seqColumn = "_seq"
)

// appliesChanges reports whether the run's staged columns are change rows
// that mode merge applies.
func (k *Sink) appliesChanges(cols []string) bool {
	return k.cfg.mode() == "merge" && slices.Contains(cols, OpColumn)
}

// changeOrder orders a key's changes newest first.
func (k *Sink) changeOrder(cols []string) string {
	order := ""
	if slices.Contains(cols, lsnColumn) && slices.Contains(cols, seqColumn) {
		order = k.q(lsnColumn) + " DESC, " + k.q(seqColumn) + " DESC, "
	}
	return order + k.q("_tidemark_seq") + " DESC"
}

// lastChanges is a query of the run's last change of each merge key, all
// the stage's columns; MySQL's carries _tidemark_rn, 1 for the last.
func (k *Sink) lastChanges(runID string, cols []string) string {
	keys := k.quoteList(k.cfg.MergeKeys)
	if k.k == sqldb.Postgres {
		return "SELECT DISTINCT ON (" + keys + ") * FROM " + k.stageSQL(runID) + " ORDER BY " + keys + ", " + k.changeOrder(cols)
	}
	return "SELECT s.*, ROW_NUMBER() OVER (PARTITION BY " + keys + " ORDER BY " + k.changeOrder(cols) + ") AS _tidemark_rn FROM " +
		k.stageSQL(runID) + " s"
}

// lastKept is the filter on lastChanges (aliased s) that keeps the last
// change of each key unless it is a delete.
func (k *Sink) lastKept() string {
	if k.k == sqldb.Postgres {
		return "s." + k.q(OpColumn) + " IS DISTINCT FROM 'D'"
	}
	return "s._tidemark_rn = 1 AND NOT (s." + k.q(OpColumn) + " <=> 'D')"
}

// applyDeletes deletes the target's rows whose merge keys' last change
// in the run is a D.
func (k *Sink) applyDeletes(ctx context.Context, tx *sql.Tx, runID string, cols []string) error {
	var on []string
	for _, key := range k.cfg.MergeKeys {
		on = append(on, "t."+k.q(key)+" = d."+k.q(key))
	}
	var q string
	if k.k == sqldb.Postgres {
		q = "DELETE FROM " + k.targetSQL() + " t USING (" + k.lastChanges(runID, cols) + ") d WHERE d." + k.q(OpColumn) +
			" = 'D' AND " + strings.Join(on, " AND ")
	} else {
		q = "DELETE t FROM " + k.targetSQL() + " t JOIN (" + k.lastChanges(runID, cols) + ") d ON " + strings.Join(on, " AND ") +
			" WHERE d._tidemark_rn = 1 AND d." + k.q(OpColumn) + " = 'D'"
	}
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("applying the run's deletes (_op D) by %s: %w", strings.Join(k.cfg.MergeKeys, ", "), err)
	}
	return nil
}
