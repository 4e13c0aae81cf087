package s3

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/tidemark-etl/tidemark/internal/s3test"
	objs3 "github.com/tidemark-etl/tidemark/objstore/s3"
)

// server is versitygw for one test, with a bucket.
type server struct {
	*s3test.Server
	bucket string
}

// startServer starts versitygw with a fresh bucket (failing the test when
// versitygw is not installed).
func startServer(t *testing.T) *server {
	t.Helper()
	srv := s3test.Start(t)
	return &server{Server: srv, bucket: srv.NewBucket(t)}
}

// clientConfig points a store at srv (or at endpoint) with its root
// credentials and quick retries.
func (srv *server) clientConfig(endpoint string) objs3.Config {
	if endpoint == "" {
		endpoint = srv.Endpoint
	}
	return objs3.Config{
		Endpoint: endpoint, Region: srv.Region,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		MaxBackoff:  20 * time.Millisecond,
	}
}

// location is s3://bucket/prefix/ on srv.
func (srv *server) location(prefix string) string { return "s3://" + srv.bucket + "/" + prefix }

// open opens the store at prefix, with o's settings over srv's.
func (srv *server) open(t testing.TB, prefix string, o Options) *Store {
	t.Helper()
	if o.S3.Endpoint == "" {
		cfg := srv.clientConfig("")
		cfg.MaxAttempts = o.S3.MaxAttempts
		o.S3 = cfg
	}
	s, err := Open(context.Background(), srv.location(prefix), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// backendOf is the S3 backend of s.
func backendOf(s *Store) *backend { return s.b }
