package sqltable

import (
	"testing"

	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/store"
)

// TestPurgeName: a reset's preview names a table load as the purge
// reports it deleted: its rows and its table.
func TestPurgeName(t *testing.T) {
	o := store.Output{Kind: manifest.TableLoad, Final: "orders_out", Rows: 5}
	if got, want := (&tableLocation{}).PurgeName(o), "5 rows of table orders_out"; got != want {
		t.Errorf("PurgeName = %q, want %q", got, want)
	}
}
