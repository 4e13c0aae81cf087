package sqltable_test

import (
	"context"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sqltable"
)

// TestLastRun: the last run is the one published last, though run ids of
// one second sort by their random part: the run loaded last may sort
// before an earlier one of the same second.
func TestLastRun(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		k := openSink(t, db, sqltable.SinkConfig{Table: "out", Mode: "append"})
		if got, err := k.LastRun(ctx, "job"); err != nil || got != "" {
			t.Fatalf("LastRun of a table without markers = %q, %v; want none", got, err)
		}
		for _, run := range []string{"20261201T100000Z-aaaaaa", "20261201T100001Z-ffffff", "20261201T100001Z-000000"} {
			load(t, k, run, "SELECT 1::BIGINT AS id, 'x' AS v")
		}
		got, err := k.LastRun(ctx, "job")
		if err != nil {
			t.Fatal(err)
		}
		if want := "20261201T100001Z-000000"; got != want {
			t.Errorf("LastRun = %q, want %q (the run published last)", got, want)
		}
	})
}
