package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqltest"
	"github.com/tidemark-etl/tidemark/source/sqltable/sqldb"
)

// stateStore is a kind of state store the many-host, crash-matrix and
// state-copy tests run against: url makes a new, empty one for a test and
// returns its location for a job file's state: (and the environment the
// commands need to reach it, if any).
type stateStore struct {
	name string
	url  func(t *testing.T) (string, []string)
	// through, for a store on a server, routes one host's traffic to the
	// store through a TCP proxy (internal/faultproxy): given the store's
	// location and environment it returns the address the proxy forwards
	// to, and how a host reaches the store through a proxy at addr (its
	// location and environment). The many-host test then gives each host a
	// proxy of its own and also stalls and cuts hosts there. Nil for a
	// store without a server (sqlite): hosts are stalled with SIGSTOP only.
	through func(url string, env []string) (target string, via func(addr string) (string, []string))
}

// stateStores are the state stores under test. A new backend is one line
// here (store/postgres: a database of the test server; store/s3: a bucket
// of the shared versitygw).
var stateStores = []stateStore{
	{name: "sqlite", url: func(t *testing.T) (string, []string) { return filepath.Join(t.TempDir(), "state.db"), nil }},
	{name: "postgres", url: func(t *testing.T) (string, []string) {
		db := sqltest.New(t, sqldb.Postgres)
		// The commands get the password in their environment; the tests'
		// own reads of the state (the one server's password, so one value
		// for every test) get it in the process's.
		os.Setenv("PGPASSWORD", db.Password)
		return db.Connection + "?schema=tidemark_e2e", []string{"PGPASSWORD=" + db.Password}
	}, through: func(loc string, env []string) (string, func(addr string) (string, []string)) {
		u, err := url.Parse(loc)
		if err != nil {
			panic(err)
		}
		return u.Host, func(addr string) (string, []string) {
			v := *u
			v.Host = addr
			return v.String(), env
		}
	}},
}

// eachStateStore runs body as a parallel subtest per state store.
func eachStateStore(t *testing.T, body func(t *testing.T, ss stateStore)) {
	t.Helper()
	for _, ss := range stateStores {
		t.Run(ss.name, func(t *testing.T) {
			t.Parallel()
			body(t, ss)
		})
	}
}

// stateOn makes a fixture whose job keeps its state in a new store of ss.
func stateOn(t *testing.T, be backend, ss stateStore, o jobOpts) (*fixture, string) {
	t.Helper()
	url, env := ss.url(t)
	o.top = append(o.top, "state: "+url)
	f := newFixtureOn(t, be, o)
	f.env = append(f.env, env...)
	return f, url
}
