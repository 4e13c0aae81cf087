package sinktest

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"

	_ "github.com/tidemark-etl/tidemark/store/postgres" // postgres://
	_ "github.com/tidemark-etl/tidemark/store/s3"       // s3://
	_ "github.com/tidemark-etl/tidemark/store/sqlite"   // plain paths
)

// Store is one kind of state store a suite runs against: Open returns a
// new, empty store of the kind each time, closed when the test ends.
type Store struct {
	Name string
	Open func(t *testing.T) store.Store
}

// Stores are the shipped state stores: memory, SQLite, PostgreSQL (a
// fresh database on TIDEMARK_TEST_PG) and S3 (a fresh bucket on srv, whose
// credentials are set in the environment; nil starts a versitygw for t).
// It sets PGPASSWORD and the AWS variables for t, so it cannot be used in
// parallel tests.
func Stores(t *testing.T, srv *s3test.Server) []Store {
	t.Helper()
	var n atomic.Int64
	next := func() int64 { return n.Add(1) }
	pg := sqltest.New(t, sqldb.Postgres)
	t.Setenv("PGPASSWORD", pg.Password)
	if srv == nil {
		srv = s3test.Start(t)
	}
	srv.SetEnv(t)
	bucket := srv.NewBucket(t)
	return []Store{
		{"memory", func(t *testing.T) store.Store { return memory.New(memory.Options{}) }},
		{"sqlite", func(t *testing.T) store.Store {
			return openStore(t, filepath.Join(t.TempDir(), "state.db"))
		}},
		{"postgres", func(t *testing.T) store.Store {
			return openStore(t, fmt.Sprintf("%s?schema=tm_state_%d", pg.Connection, next()))
		}},
		{"s3", func(t *testing.T) store.Store {
			return openStore(t, fmt.Sprintf("s3://%s/state-%d/", bucket, next()))
		}},
	}
}

func openStore(t *testing.T, location string) store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), location)
	if err != nil {
		t.Fatalf("opening state store %s: %v", store.Redact(location), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
