package sqltable_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/sink/sqltable"
)

// TestLastRuns: the newest runs are every run of the newest second, since
// run ids of one second sort by their random part, not by time: the run
// loaded last may sort before an earlier one of the same second.
func TestLastRuns(t *testing.T) {
	sqltest.EachOf(t, servers, func(t *testing.T, db *sqltest.DB) {
		ctx := context.Background()
		k := openSink(t, db, sqltable.SinkConfig{Table: "out", Mode: "append"})
		if got, err := k.LastRuns(ctx, "job"); err != nil || len(got) != 0 {
			t.Fatalf("LastRuns of a table without markers = %q, %v; want none", got, err)
		}
		for _, run := range []string{"20261201T100000Z-aaaaaa", "20261201T100001Z-ffffff", "20261201T100001Z-000000"} {
			load(t, k, run, "SELECT 1::BIGINT AS id, 'x' AS v")
		}
		got, err := k.LastRuns(ctx, "job")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := []string{"20261201T100001Z-000000", "20261201T100001Z-ffffff"}; !slices.Equal(got, want) {
			t.Errorf("LastRuns = %q, want %q (every run of the newest second)", got, want)
		}
	})
}
