package postgres

import (
	"context"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
	"github.com/tidemark-etl/tidemark/store/storetest"
)

// testDB is one fresh database on the test server for one test, reached
// as a state URL without its password (which goes in PGPASSWORD, as a
// user's would).
type testDB struct {
	*sqltest.DB
	url      string // postgres://user@host:port/db, no password
	password string
	schemas  atomic.Int64
}

// newDB makes a fresh database and sets PGPASSWORD for the test.
func newDB(t *testing.T) *testDB {
	t.Helper()
	db := sqltest.New(t, sqldb.Postgres)
	t.Setenv("PGPASSWORD", db.Password)
	return &testDB{DB: db, url: db.Connection, password: db.Password}
}

// location is the state URL of schema in the database ("" for the
// default schema).
func (d *testDB) location(schema string) string {
	if schema == "" {
		return d.url
	}
	u, err := url.Parse(d.url)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// open opens a new store in a schema of its own.
func (d *testDB) open(t *testing.T) *Store {
	t.Helper()
	n := d.schemas.Add(1)
	return d.openAt(t, d.location("tm_test_"+itoa(n)))
}

// openAt opens the store at location, closed when the test ends.
func (d *testDB) openAt(t *testing.T, location string) *Store {
	t.Helper()
	s, err := Open(context.Background(), location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func itoa(n int64) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{digits[n%10]}, b...)
	}
	return string(b)
}

// TestStore runs the suite, each case in a schema of its own in one
// database of the test server.
func TestStore(t *testing.T) {
	db := newDB(t)
	storetest.Run(t, func(t *testing.T) store.Store { return db.open(t) })
}

// TestImport runs the cases of store.Importer (tidemark state copy), to
// and from the memory store.
func TestImport(t *testing.T) {
	db := newDB(t)
	storetest.RunImport(t, func(t *testing.T) store.Store { return db.open(t) },
		func(t *testing.T) store.Store { return memory.New(memory.Options{}) })
}
