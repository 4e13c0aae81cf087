package sqlbench_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable/sqlbench"
)

// TestMeasure prints the SQL source figures. It takes a few minutes, so it
// runs only with TIDEMARK_SQL_BENCH=1 (sizes: TIDEMARK_SQL_BENCH_ROWS,
// default 1,000,000; the incremental table is ten times that).
func TestMeasure(t *testing.T) {
	if os.Getenv("TIDEMARK_SQL_BENCH") != "1" {
		t.Skip("set TIDEMARK_SQL_BENCH=1 to measure SQL sources")
	}
	rows := 1000000
	if v := os.Getenv("TIDEMARK_SQL_BENCH_ROWS"); v != "" {
		if _, err := fmt.Sscan(v, &rows); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for _, env := range []string{sqltest.EnvPG, sqltest.EnvMySQL} {
		u := os.Getenv(env)
		if u == "" {
			t.Fatalf("%s is not set: run through scripts/test.sh", env)
		}
		r, err := sqlbench.Extract(ctx, u, rows, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Log(r)
	}
	rs, err := sqlbench.Incremental(ctx, os.Getenv(sqltest.EnvPG), rows*10, 1000, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		t.Log(r)
	}
}
