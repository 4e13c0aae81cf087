package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

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
}

// stateStores are the state stores under test. A new backend is one line
// here (store/postgres: a database of the test server; store/s3: a bucket
// of the shared versitygw).
var stateStores = []stateStore{
	{"sqlite", func(t *testing.T) (string, []string) { return filepath.Join(t.TempDir(), "state.db"), nil }},
	{"s3", func(t *testing.T) (string, []string) {
		env := sharedS3(t)
		return "s3://" + env.srv.NewBucket(t) + "/tidemark/", env.env()
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
