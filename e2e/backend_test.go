package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// backend is where a fixture's input and output live: local folders, or
// buckets on a real S3 server (versitygw). The scenarios of the core run on
// both through eachBackend; what differs is behind place.
type backend string

const (
	local backend = "local"
	onS3  backend = "s3"
)

var backends = []backend{local, onS3}

// eachBackend runs body as a parallel subtest per backend.
func eachBackend(t *testing.T, body func(t *testing.T, be backend)) {
	t.Helper()
	for _, be := range backends {
		t.Run(string(be), func(t *testing.T) {
			t.Parallel()
			body(t, be)
		})
	}
}

// place is a folder of objects that a job reads or writes: a local folder
// or a prefix in a bucket. Keys are relative and '/'-separated.
type place interface {
	// loc is the location to write in a job file.
	loc() string
	// put writes an object (through the S3 API on S3).
	put(t testing.TB, key string, data []byte)
	// get reads an object.
	get(t testing.TB, key string) []byte
	// remove deletes an object.
	remove(t testing.TB, key string)
	// setMtime sets an object's modification time (LastModified on S3).
	setMtime(t testing.TB, key string, mtime time.Time)
	// mirror returns a local folder holding what a reader of the place sees
	// now, every key included (_tidemark/ too): the folder itself for local
	// places; a fresh download through the S3 API (ListObjectsV2 and
	// GetObject) for S3 ones, so every read-back on S3 checks the objects
	// as a client sees them.
	mirror(t testing.TB) string
}

// newPlace makes an empty place called name for a test on be. On S3 each
// place gets its own bucket.
func newPlace(t testing.TB, be backend, dir, name string) place {
	t.Helper()
	switch be {
	case onS3, onSparkS3, onSparkClusterS3:
		s := sharedS3(t)
		return &s3Place{srv: s, bucket: s.srv.NewBucket(t), prefix: name + "/"}
	default:
		p := &localPlace{dir: filepath.Join(dir, name)}
		if err := os.MkdirAll(p.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// localPlace is a local folder.
type localPlace struct{ dir string }

func (p *localPlace) loc() string                   { return p.dir }
func (p *localPlace) mirror(testing.TB) string      { return p.dir }
func (p *localPlace) path(key string) string        { return filepath.Join(p.dir, filepath.FromSlash(key)) }
func (p *localPlace) remove(t testing.TB, k string) { t.Helper(); removeFile(t, p.path(k)) }

func (p *localPlace) put(t testing.TB, key string, data []byte) {
	t.Helper()
	writeFile(t, p.path(key), data)
}

func (p *localPlace) get(t testing.TB, key string) []byte {
	t.Helper()
	data, err := os.ReadFile(p.path(key))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (p *localPlace) setMtime(t testing.TB, key string, mtime time.Time) {
	t.Helper()
	setMtime(t, p.path(key), mtime)
}

// s3Place is a prefix in a bucket of the shared versitygw.
type s3Place struct {
	srv    *s3Env
	bucket string
	prefix string // "" or ends with '/'
}

func (p *s3Place) loc() string { return "s3://" + p.bucket + "/" + p.prefix }

func (p *s3Place) put(t testing.TB, key string, data []byte) {
	t.Helper()
	_, err := p.srv.client.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(p.bucket), Key: aws.String(p.prefix + key), Body: bytes.NewReader(data),
	})
	if err != nil {
		t.Fatalf("putting s3://%s/%s%s: %v", p.bucket, p.prefix, key, err)
	}
}

func (p *s3Place) get(t testing.TB, key string) []byte {
	t.Helper()
	data, err := p.srv.getObject(context.Background(), p.bucket, p.prefix+key)
	if err != nil {
		t.Fatalf("getting s3://%s/%s%s: %v", p.bucket, p.prefix, key, err)
	}
	return data
}

func (p *s3Place) remove(t testing.TB, key string) {
	t.Helper()
	_, err := p.srv.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{
		Bucket: aws.String(p.bucket), Key: aws.String(p.prefix + key),
	})
	if err != nil {
		t.Fatalf("deleting s3://%s/%s%s: %v", p.bucket, p.prefix, key, err)
	}
}

// setMtime changes the LastModified that versitygw serves, which it takes
// from the object file's mtime. Real S3 cannot do this; it stands for an
// object that is listed long after its LastModified (a multipart upload's
// LastModified is when the upload started, a replicated object keeps the
// source's).
func (p *s3Place) setMtime(t testing.TB, key string, mtime time.Time) {
	t.Helper()
	setMtime(t, p.srv.srv.ObjectPath(p.bucket, p.prefix+key), mtime)
}

func (p *s3Place) mirror(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	keys, err := p.srv.listKeys(ctx, p.bucket, p.prefix)
	if err != nil {
		t.Fatalf("listing %s: %v", p.loc(), err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, k := range keys {
		rel := strings.TrimPrefix(k, p.prefix)
		if strings.HasSuffix(rel, "/") {
			continue // a folder marker, not an object a reader reads
		}
		g.Go(func() error {
			data, err := p.srv.getObject(gctx, p.bucket, k)
			if err != nil {
				return err
			}
			dst := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, data, 0o644)
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("downloading %s: %v", p.loc(), err)
	}
	return dir
}

// posixDir is where versitygw keeps the place's objects as plain files.
func (p *s3Place) posixDir() string { return p.srv.srv.ObjectPath(p.bucket, p.prefix) }

// s3Env is the versitygw shared by the package's tests, and an S3 client
// of our own (the plain SDK, not tidemark's store) to set up and read back.
type s3Env struct {
	srv    *s3test.Server
	client *s3.Client
}

var (
	s3Once   sync.Once
	s3Shared *s3Env
	s3Err    error
	s3Root   string // the posix folder, removed by TestMain
)

// sharedS3 returns the package's versitygw, starting it on first use. A
// missing versitygw fails the test, saying to run scripts/test.sh.
func sharedS3(t testing.TB) *s3Env {
	t.Helper()
	bin := s3test.RequireBinary(t)
	s3Once.Do(func() {
		s3Root, s3Err = os.MkdirTemp("", "tidemark-e2e-s3-")
		if s3Err != nil {
			return
		}
		var srv *s3test.Server
		if srv, s3Err = s3test.Launch(bin, s3Root); s3Err == nil {
			s3Shared = &s3Env{srv: srv, client: s3Client(srv.Endpoint, srv.AccessKey, srv.SecretKey, srv.Region)}
		}
	})
	if s3Err != nil {
		t.Fatalf("starting versitygw: %v", s3Err)
	}
	return s3Shared
}

// stopSharedS3 stops the shared versitygw, if it was started.
func stopSharedS3() {
	if s3Shared != nil {
		s3Shared.srv.Close()
	}
	if s3Root != "" {
		os.RemoveAll(s3Root)
	}
}

// s3Client is a plain SDK client for an S3 endpoint, path-style.
func s3Client(endpoint, access, secret, region string) *s3.Client {
	return s3.New(s3.Options{
		Region:       region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(access, secret, ""),
	})
}

// env is the environment that points tidemark's standard AWS chain at the
// shared server: root credentials, region and AWS_ENDPOINT_URL, and no
// shared config or instance metadata to fall back on.
func (e *s3Env) env() []string {
	return s3EnvFor(e.srv.Endpoint, e.srv.AccessKey, e.srv.SecretKey, e.srv.Region)
}

func s3EnvFor(endpoint, access, secret, region string) []string {
	none := filepath.Join(os.TempDir(), "tidemark-e2e-no-such-aws-config")
	return []string{
		"AWS_ACCESS_KEY_ID=" + access,
		"AWS_SECRET_ACCESS_KEY=" + secret,
		"AWS_REGION=" + region,
		"AWS_ENDPOINT_URL=" + endpoint,
		"AWS_CONFIG_FILE=" + none,
		"AWS_SHARED_CREDENTIALS_FILE=" + none,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// listKeys lists every key under prefix (hidden ones included).
func (e *s3Env) listKeys(ctx context.Context, bucket, prefix string) ([]string, error) {
	var keys []string
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
	for {
		out, err := e.client.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if !aws.ToBool(out.IsTruncated) {
			return keys, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

func (e *s3Env) getObject(ctx context.Context, bucket, key string) ([]byte, error) {
	out, err := e.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err == nil && out.ContentLength != nil && int64(len(data)) != *out.ContentLength {
		err = errors.New("short body")
	}
	return data, err
}

// multipartUploads lists the incomplete multipart uploads under prefix.
func (e *s3Env) multipartUploads(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	out, err := e.client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{
		Bucket: aws.String(bucket), Prefix: aws.String(prefix),
	})
	if err != nil {
		t.Fatalf("listing multipart uploads of s3://%s/%s: %v", bucket, prefix, err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, path.Join(bucket, aws.ToString(u.Key))+" (upload "+aws.ToString(u.UploadId)+")")
	}
	return keys
}
