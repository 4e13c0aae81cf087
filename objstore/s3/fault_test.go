package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/objstore"
)

// faulty returns a store that talks to a fresh versitygw through a fault
// proxy.
func faulty(t *testing.T, mod func(*Config)) (*Store, *s3test.FaultProxy, *s3test.Server) {
	t.Helper()
	srv := s3test.Start(t)
	p := s3test.StartProxy(t, srv.Endpoint)
	return newStore(t, srv, p.URL, srv.NewBucket(t), "root/", mod), p, srv
}

func TestRetryThrottling(t *testing.T) {
	s, p, _ := faulty(t, nil)
	ctx := context.Background()

	p.SlowDown(3, "PutObject")
	if err := s.Put(ctx, "a.csv", strings.NewReader("1\n")); err != nil {
		t.Fatalf("Put after 3 x 503 SlowDown: %v", err)
	}
	if got := p.Count("PutObject"); got != 4 {
		t.Errorf("server saw %d PutObject requests, want 4 (3 throttled + 1)", got)
	}
	if got := s.Requests()["PutObject"]; got != 4 {
		t.Errorf("store counted %d PutObject requests, want 4", got)
	}

	p.SlowDown(3, "ListObjectsV2")
	objs := listKeys(t, s.List(ctx, ""))
	if len(objs) != 1 || objs[0].Key != "a.csv" {
		t.Errorf("List after 3 x 503 = %+v", objs)
	}
	if got := p.Count("ListObjectsV2"); got != 4 {
		t.Errorf("server saw %d ListObjectsV2 requests, want 4", got)
	}

	p.Fail(2, http.StatusInternalServerError, "InternalError", "GetObject")
	p.Fail(2, http.StatusServiceUnavailable, "ServiceUnavailable", "HeadObject")
	if got := readAll(t, s, "a.csv"); string(got) != "1\n" {
		t.Errorf("read %q", got)
	}
	if _, err := s.Stat(ctx, "a.csv"); err != nil {
		t.Errorf("Stat after 2 x 503: %v", err)
	}
	if got, want := p.Injected(), 10; got != want {
		t.Errorf("%d faults injected, want %d", got, want)
	}
}

func TestRetryConnectionReset(t *testing.T) {
	s, p, _ := faulty(t, func(c *Config) { c.PartSize = 5 << 20 })
	ctx := context.Background()

	p.Reset(2, "PutObject")
	if err := s.Put(ctx, "a.csv", strings.NewReader("1\n")); err != nil {
		t.Fatalf("Put after 2 resets: %v", err)
	}
	if got := p.Count("PutObject"); got < 3 {
		t.Errorf("server saw %d PutObject requests, want at least 3", got)
	}
	p.Reset(2, "ListObjectsV2")
	if objs := listKeys(t, s.List(ctx, "")); len(objs) != 1 {
		t.Errorf("List after 2 resets = %+v", objs)
	}
	// A multipart upload whose parts are reset.
	body := randomBytes(t, 12<<20)
	p.Reset(2, "UploadPart")
	p.Reset(1, "CompleteMultipartUpload")
	putBytes(t, s, "big.bin", body)
	if got := readAll(t, s, "big.bin"); !bytes.Equal(got, body) {
		t.Error("multipart body read back differently")
	}
	if got := p.Injected(); got != 7 {
		t.Errorf("%d resets injected, want 7", got)
	}
	t.Logf("requests seen by the server: %v", p.Counts())
}

func TestLostResponses(t *testing.T) {
	s, p, _ := faulty(t, func(c *Config) { c.PartSize = 5 << 20 })
	ctx := context.Background()
	body := randomBytes(t, 11<<20)
	// The server completes the upload but the answer never arrives; the
	// retry finds no upload (AWS may answer so; versitygw completes again,
	// hence the injected 404) and must recognise the object as its own.
	p.DropResponse(1, "CompleteMultipartUpload")
	p.Fail(1, http.StatusNotFound, "NoSuchUpload", "CompleteMultipartUpload")
	putBytes(t, s, "big.bin", body)
	if r := s.Requests(); r["CompleteMultipartUpload"] != 2 || r["HeadObject"] != 1 {
		t.Errorf("requests %v, want the completion retried and checked with a HEAD", r)
	}
	if got := readAll(t, s, "big.bin"); !bytes.Equal(got, body) {
		t.Error("big.bin read back differently")
	}
	p.DropResponse(1, "PutObject")
	putBytes(t, s, "a.csv", []byte("1\n"))
	p.DropResponse(1, "CopyObject")
	p.DropResponse(1, "DeleteObject")
	if err := s.Move(ctx, "a.csv", "b.csv"); err != nil {
		t.Errorf("Move with lost answers: %v", err)
	}
	if err := s.Move(ctx, "b.csv", "dir/b.csv"); err != nil {
		t.Fatal(err)
	}
	p.DropResponse(1, "DeleteObjects")
	if err := s.DeletePrefix(ctx, "dir/"); err != nil {
		t.Errorf("DeletePrefix with a lost answer: %v", err)
	}
	if objs := listKeys(t, s.List(ctx, "")); len(objs) != 1 || objs[0].Key != "big.bin" {
		t.Errorf("List = %+v, want big.bin alone", objs)
	}
	if got := p.Injected(); got != 6 {
		t.Errorf("%d faults injected, want 6", got)
	}
	t.Logf("requests seen by the server: %v", p.Counts())
}

func TestRetryTimeout(t *testing.T) {
	s, p, _ := faulty(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	putBytes(t, s, "a.csv", []byte("1\n"))
	p.Delay(1, 2*time.Second, "HeadObject")
	start := time.Now()
	if _, err := s.Stat(ctx, "a.csv"); err != nil {
		t.Fatalf("Stat after a stalled answer: %v", err)
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("Stat took %v: the stalled attempt was not cut short", d)
	}
	if got := p.Count("HeadObject"); got != 2 {
		t.Errorf("server saw %d HeadObject requests, want 2", got)
	}
}

func TestReadsResume(t *testing.T) {
	s, p, _ := faulty(t, nil)
	ctx := context.Background()
	body := randomBytes(t, 5<<20)
	putBytes(t, s, "in.bin", body)

	p.CutBody(2, 1<<20, "GetObject")
	if got := readAll(t, s, "in.bin"); !bytes.Equal(got, body) {
		t.Errorf("Open read %d bytes differing from the %d put", len(got), len(body))
	}
	if got := p.Count("GetObject"); got != 3 {
		t.Errorf("server saw %d GetObject requests, want 3 (2 cut + resume)", got)
	}

	p.ResetCounts()
	p.CutBody(3, 100<<10, "GetObject")
	dst := filepath.Join(t.TempDir(), "in.bin")
	if _, err := s.Download(ctx, "in.bin", dst, 3, 1<<20); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, dst); !bytes.Equal(got, body) {
		t.Error("downloaded bytes differ")
	}
	if got := p.Count("GetObject"); got != 8 {
		t.Errorf("server saw %d GetObject requests, want 8 (5 parts + 3 refetches)", got)
	}

	// The object changes between the cut and the resume: the read fails
	// rather than splicing two versions.
	r, err := s.Open(ctx, "in.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 1<<20)
	if _, err := r.Read(buf); err != nil {
		t.Fatal(err)
	}
	putBytes(t, s, "in.bin", randomBytes(t, 5<<20))
	p.CutBody(1, 0, "GetObject")
	r.(*objectReader).body.Close() // break the current body
	var readErr error
	for readErr == nil {
		_, readErr = r.Read(buf)
	}
	if !strings.Contains(readErr.Error(), "changed") || !errors.Is(readErr, objstore.ErrChanged) {
		t.Errorf("reading across a replacement: %v, want an error saying the object changed", readErr)
	}
}

func TestRetriesExhausted(t *testing.T) {
	s, p, _ := faulty(t, func(c *Config) { c.MaxAttempts = 3 })
	p.SlowDown(100, "PutObject")
	err := s.Put(context.Background(), "dir/a.csv", strings.NewReader("1\n"))
	if err == nil {
		t.Fatal("Put succeeded against a server that always throttles")
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != 503 || e.Code != "SlowDown" || e.Attempts != 3 || e.RequestID == "" {
		t.Errorf("error %#v, want a 503 SlowDown after 3 attempts with a request id", e)
	}
	for _, want := range []string{"PutObject", "s3://" + s.bucket + "/root/dir/a.csv", "503", "SlowDown", "request id FAULT", "3 attempts"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if got := p.Count("PutObject"); got != 3 {
		t.Errorf("server saw %d PutObject requests, want 3", got)
	}
	t.Logf("error: %v", err)
}

func TestPermanentErrors(t *testing.T) {
	srv := s3test.Start(t)
	p := s3test.StartProxy(t, srv.Endpoint)
	bucket := srv.NewBucket(t)
	ctx := context.Background()

	t.Run("wrong secret", func(t *testing.T) {
		const secret = "not-the-secret-0123456789"
		s := newStore(t, srv, p.URL, bucket, "", func(c *Config) {
			c.Credentials = credentials.NewStaticCredentialsProvider(srv.AccessKey, secret, "")
		})
		p.ResetCounts()
		start := time.Now()
		_, err := s.Stat(ctx, "x")
		_, lerr := listKeys2(s.List(ctx, "in/"))
		perr := s.Put(ctx, "out/x", strings.NewReader("x"))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("three calls took %v: a 403 must not be retried", d)
		}
		if errors.Is(err, objstore.ErrNotExist) {
			t.Errorf("Stat with a wrong secret reads as missing: %v", err)
		}
		for op, err := range map[string]error{"HeadObject": err, "ListObjectsV2": lerr, "PutObject": perr} {
			if err == nil {
				t.Errorf("%s with a wrong secret succeeded", op)
				continue
			}
			msg := err.Error()
			for _, want := range []string{op, bucket, "403"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s error %q does not mention %q", op, msg, want)
				}
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, srv.SecretKey) {
				t.Errorf("%s error %q shows the secret key", op, msg)
			}
			t.Logf("%s: %v", op, msg)
		}
		if c := p.Counts(); c["HeadObject"] != 1 || c["ListObjectsV2"] != 1 || c["PutObject"] != 1 {
			t.Errorf("requests %v, want one of each (no retries)", c)
		}
	})
	t.Run("missing bucket", func(t *testing.T) {
		s := newStore(t, srv, p.URL, "no-such-bucket", "in/", nil)
		p.ResetCounts()
		_, lerr := listKeys2(s.List(ctx, ""))
		perr := s.Put(ctx, "x", strings.NewReader("x"))
		_, oerr := s.Open(ctx, "x")
		for op, err := range map[string]error{"ListObjectsV2": lerr, "PutObject": perr, "GetObject": oerr} {
			if err == nil || !strings.Contains(err.Error(), `bucket "no-such-bucket" does not exist`) || !strings.Contains(err.Error(), op) {
				t.Errorf("%s on a missing bucket: %v, want a clear error", op, err)
			}
			if errors.Is(err, objstore.ErrNotExist) {
				t.Errorf("%s on a missing bucket reads as a missing object", op)
			}
		}
		if c := p.Counts(); c["ListObjectsV2"] != 1 || c["PutObject"] != 1 || c["GetObject"] != 1 {
			t.Errorf("requests %v, want one of each (no retries)", c)
		}
		t.Logf("ListObjectsV2: %v", lerr)
	})
	t.Run("wrong region", func(t *testing.T) {
		p.ResetCounts()
		s := newStore(t, srv, p.URL, bucket, "", func(c *Config) { c.Region = "eu-central-1" })
		_, err := listKeys2(s.List(ctx, ""))
		if err == nil || !strings.Contains(err.Error(), `is in region us-east-1: set AWS_REGION`) {
			t.Errorf("List signed for the wrong region: %v, want an error naming the bucket's region", err)
		}
		if c := p.Count("ListObjectsV2"); c != 1 {
			t.Errorf("%d ListObjectsV2 requests, want 1 (no retries)", c)
		}
		t.Logf("ListObjectsV2: %v", err)
	})
	t.Run("access denied mid-upload", func(t *testing.T) {
		s := newStore(t, srv, p.URL, bucket, "", func(c *Config) { c.PartSize = 5 << 20 })
		p.ResetCounts()
		p.Fail(1, http.StatusForbidden, "AccessDenied", "UploadPart")
		err := s.Put(ctx, "big.bin", bytes.NewReader(randomBytes(t, 11<<20)))
		if err == nil || !strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), "access denied") {
			t.Errorf("Put: %v, want AccessDenied with a hint", err)
		}
		if c := p.Count("AbortMultipartUpload"); c != 1 {
			t.Errorf("%d AbortMultipartUpload requests, want 1", c)
		}
		out, lerr := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
		if lerr != nil {
			t.Fatal(lerr)
		}
		if len(out.Uploads) != 0 {
			t.Errorf("%d uploads left after a failed Put, want 0", len(out.Uploads))
		}
		if _, err := s.Stat(ctx, "big.bin"); !errors.Is(err, objstore.ErrNotExist) {
			t.Errorf("a failed Put left an object: %v", err)
		}
	})
}

// listKeys2 drains a listing, returning its first error.
func listKeys2(seq func(func(objstore.Object, error) bool)) ([]objstore.Object, error) {
	var objs []objstore.Object
	for o, err := range seq {
		if err != nil {
			return objs, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

func TestCanceled(t *testing.T) {
	s, p, _ := faulty(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p.Delay(1, 5*time.Second, "PutObject")
	err := s.Put(ctx, "a", strings.NewReader("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Put past its deadline: %v, want DeadlineExceeded", err)
	}
}

func TestNoCredentials(t *testing.T) {
	srv := s3test.Start(t)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true") // no instance role here, and no waiting for one
	s, err := New(context.Background(), Config{Bucket: "data", Endpoint: srv.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	_, err = listKeys2(s.List(context.Background(), "in/"))
	if err == nil || !strings.Contains(err.Error(), "no usable AWS credentials") || !strings.Contains(err.Error(), "ListObjectsV2 s3://data/in/") {
		t.Errorf("List without credentials: %v, want a clear error", err)
	}
}

// TestDownloadAcrossReplacement: an object replaced between two parts of
// a download fails it with objstore.ErrChanged (the later part, pinned
// with If-Match, gets 412) and leaves no file; OpenVersion reports the
// version it reads.
func TestDownloadAcrossReplacement(t *testing.T) {
	s, p, _ := faulty(t, nil)
	ctx := context.Background()
	putBytes(t, s, "in.bin", randomBytes(t, 3<<20))

	p.Pass(1, "GetObject")
	p.Delay(1, 2*time.Second, "GetObject")
	dst := filepath.Join(t.TempDir(), "in.bin")
	done := make(chan error, 1)
	go func() {
		_, err := s.Download(ctx, "in.bin", dst, 1, 1<<20)
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); p.Count("GetObject") < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the download's second part never arrived")
		}
	}
	replacement := randomBytes(t, 3<<20)
	putBytes(t, s, "in.bin", replacement)
	err := <-done
	if !errors.Is(err, objstore.ErrChanged) {
		t.Errorf("download across a replacement: %v, want objstore.ErrChanged", err)
	}
	if _, serr := os.Stat(dst); serr == nil {
		t.Errorf("a download that failed left %s", dst)
	}

	r, o, err := s.OpenVersion(ctx, "in.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Stat(ctx, "in.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, replacement) || o.Size != st.Size || o.ETag != st.ETag || !o.ModTime.Equal(st.ModTime) {
		t.Errorf("OpenVersion reported %+v and %d bytes, want %+v and the %d bytes put", o, len(got), st, len(replacement))
	}
}
