package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
	"github.com/tidemark-etl/tidemark/internal/sqltest"
	objs3 "github.com/tidemark-etl/tidemark/objstore/s3"
	"github.com/tidemark-etl/tidemark/store"
	s3store "github.com/tidemark-etl/tidemark/store/s3"
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
	{name: "s3", url: func(t *testing.T) (string, []string) {
		env := sharedS3(t)
		return "s3://" + env.srv.NewBucket(t) + "/tidemark/", env.env()
	}, through: func(loc string, env []string) (string, func(addr string) (string, []string)) {
		// Only the state goes through the proxy: its endpoint in the
		// location, the source's and sink's in the environment.
		u, err := url.Parse(sharedS3Endpoint(env))
		if err != nil {
			panic(err)
		}
		return u.Host, func(addr string) (string, []string) {
			return loc + "?endpoint=" + url.QueryEscape("http://"+addr), env
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

// openState opens an existing state store read-only in the test process,
// with the environment env the commands get (an s3:// store takes its
// endpoint, region and credentials from it, as the commands' AWS chain
// does, since the test process has none of its own).
func openState(ctx context.Context, url string, env []string) (store.Store, error) {
	if !strings.HasPrefix(url, "s3://") {
		return store.OpenExisting(ctx, url, true)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	endpoint := vars["AWS_ENDPOINT_URL_S3"]
	if endpoint == "" {
		endpoint = vars["AWS_ENDPOINT_URL"]
	}
	return s3store.Open(ctx, url, s3store.Options{ReadOnly: true, S3: objs3.Config{
		Endpoint: endpoint, Region: vars["AWS_REGION"],
		Credentials: credentials.NewStaticCredentialsProvider(vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"], ""),
	}})
}

// sharedS3Endpoint is the S3 endpoint an environment names.
func sharedS3Endpoint(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AWS_ENDPOINT_URL_S3="); ok && v != "" {
			return v
		}
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "AWS_ENDPOINT_URL="); ok {
			return v
		}
	}
	return ""
}
