package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/internal/s3test"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/objstore/objstoretest"
)

// newStore opens a store on srv (or on endpoint, e.g. a proxy in front of
// it) with srv's root credentials; mod adjusts the config.
func newStore(t testing.TB, srv *s3test.Server, endpoint, bucket, prefix string, mod func(*Config)) *Store {
	t.Helper()
	if endpoint == "" {
		endpoint = srv.Endpoint
	}
	cfg := Config{
		Bucket: bucket, Prefix: prefix, Endpoint: endpoint, Region: srv.Region,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, ""),
		MaxBackoff:  50 * time.Millisecond, // keep retry tests quick
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	srv := s3test.Start(t)
	t.Run("prefix", func(t *testing.T) {
		objstoretest.Run(t, func(t *testing.T) objstore.Store {
			return newStore(t, srv, "", srv.NewBucket(t), "some/root/", nil)
		})
	})
	t.Run("bucket", func(t *testing.T) {
		objstoretest.Run(t, func(t *testing.T) objstore.Store {
			return newStore(t, srv, "", srv.NewBucket(t), "", nil)
		})
	})
}

func putBytes(t testing.TB, s *Store, key string, b []byte) {
	t.Helper()
	if err := s.Put(context.Background(), key, bytes.NewReader(b)); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func readAll(t testing.TB, s *Store, key string) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	return b
}

func listKeys(t testing.TB, seq func(func(objstore.Object, error) bool)) []objstore.Object {
	t.Helper()
	var objs []objstore.Object
	for o, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// putMany puts n small objects named by name(i), 32 at a time.
func putMany(t testing.TB, s *Store, n int, name func(int) string) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := s.Put(context.Background(), name(i), strings.NewReader(name(i))); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestOpenWithEnvironment(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	ctx := context.Background()

	t.Run("AWS_ENDPOINT_URL_S3", func(t *testing.T) {
		srv.SetEnv(t)
		st, err := objstore.Open(ctx, "s3://"+bucket+"/env", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Store)
		if s.Endpoint() != srv.Endpoint || !s.PathStyle() || s.Region() != srv.Region {
			t.Errorf("endpoint %q path-style %v region %q, want %q true %q", s.Endpoint(), s.PathStyle(), s.Region(), srv.Endpoint, srv.Region)
		}
		if got := s.Root(); got != "s3://"+bucket+"/env/" {
			t.Errorf("Root() = %q", got)
		}
		putBytes(t, s, "x.csv", []byte("1\n"))
		if objs := listKeys(t, s.List(ctx, "")); len(objs) != 1 || objs[0].Key != "x.csv" {
			t.Errorf("List = %+v", objs)
		}
	})
	t.Run("AWS_ENDPOINT_URL", func(t *testing.T) {
		srv.SetEnv(t)
		t.Setenv("AWS_ENDPOINT_URL_S3", "")
		os.Unsetenv("AWS_ENDPOINT_URL_S3")
		t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
		t.Setenv("AWS_REGION", "")
		os.Unsetenv("AWS_REGION") // a custom endpoint without a region signs for us-east-1
		st, err := objstore.Open(ctx, "s3://"+bucket+"/env", nil)
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Store)
		if s.Endpoint() != srv.Endpoint || !s.PathStyle() || s.Region() != "us-east-1" {
			t.Errorf("endpoint %q path-style %v region %q", s.Endpoint(), s.PathStyle(), s.Region())
		}
		if got := readAll(t, s, "x.csv"); string(got) != "1\n" {
			t.Errorf("read %q", got)
		}
	})
	t.Run("options override the environment", func(t *testing.T) {
		srv.SetEnv(t)
		t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1") // nothing listens there
		st, err := objstore.Open(ctx, "s3://"+bucket+"/env", map[string]string{"endpoint": srv.Endpoint, "region": "eu-west-3"})
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Store)
		if s.Endpoint() != srv.Endpoint || s.Region() != "eu-west-3" || !s.PathStyle() {
			t.Errorf("endpoint %q region %q path-style %v", s.Endpoint(), s.Region(), s.PathStyle())
		}
		st, err = objstore.Open(ctx, "s3://"+bucket, map[string]string{"path_style": "false"})
		if err != nil {
			t.Fatal(err)
		}
		if st.(*Store).PathStyle() {
			t.Error("path_style=false ignored")
		}
	})
	t.Run("profile option", func(t *testing.T) {
		srv.SetEnv(t)
		for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_ENDPOINT_URL_S3"} {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
		dir := t.TempDir()
		conf := filepath.Join(dir, "config")
		creds := filepath.Join(dir, "credentials")
		os.WriteFile(conf, []byte("[profile vgw]\nregion = us-east-1\nendpoint_url = "+srv.Endpoint+"\n"), 0o600)
		os.WriteFile(creds, []byte("[vgw]\naws_access_key_id = "+srv.AccessKey+"\naws_secret_access_key = "+srv.SecretKey+"\n"), 0o600)
		t.Setenv("AWS_CONFIG_FILE", conf)
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
		st, err := objstore.Open(ctx, "s3://"+bucket+"/env", map[string]string{"profile": "vgw"})
		if err != nil {
			t.Fatal(err)
		}
		s := st.(*Store)
		if s.Endpoint() != srv.Endpoint || !s.PathStyle() {
			t.Errorf("endpoint %q path-style %v, want the profile's endpoint, path-style", s.Endpoint(), s.PathStyle())
		}
		if got := readAll(t, s, "x.csv"); string(got) != "1\n" {
			t.Errorf("read %q", got)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		for _, tt := range []struct {
			opts map[string]string
			want string
		}{
			{map[string]string{"endpoint": "localhost:9000"}, "endpoint"},
			{map[string]string{"part_size": "1MiB"}, "part_size"},
			{map[string]string{"max_attempts": "many"}, "max_attempts"},
			{map[string]string{"path_style": "maybe"}, "path_style"},
			{map[string]string{"colour": "blue"}, `unknown s3 option "colour"`},
		} {
			_, err := objstore.Open(ctx, "s3://"+bucket, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open(%v): %v, want an error naming %s", tt.opts, err, tt.want)
			}
		}
		if _, err := objstore.Open(ctx, "s3://", nil); err == nil {
			t.Error("s3:// without a bucket opened")
		}
	})
}

func TestListPagination(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "in/", func(c *Config) { c.ListPageSize = 100 })
	const n = 2500
	name := func(i int) string { return fmt.Sprintf("d%02d/f%04d.csv", i%25, i) }
	putMany(t, s, n, name)
	putBytes(t, s, "d00/_SUCCESS", nil)
	putBytes(t, s, "d00/sub/", nil) // a folder marker

	s.ResetRequests()
	objs := listKeys(t, s.List(context.Background(), ""))
	var want []string
	for i := range n {
		want = append(want, name(i))
	}
	slices.Sort(want)
	got := make([]string, len(objs))
	for i, o := range objs {
		got[i] = o.Key
	}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d in byte order (first %q)", len(got), len(want), got[:min(3, len(got))])
	}
	// 2,502 keys (the marker and _SUCCESS are listed by S3, skipped by us) in
	// pages of 100.
	if r := s.Requests()["ListObjectsV2"]; r != 26 {
		t.Errorf("ListObjectsV2 requests = %d, want 26", r)
	}
}

func TestListSkipsHiddenFolders(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "", func(c *Config) { c.ListPageSize = 100 })
	putMany(t, s, 1000, func(i int) string { return fmt.Sprintf("_tidemark/staging/r1/data/%04d.parquet", i) })
	putBytes(t, s, "a.csv", nil)
	putBytes(t, s, "Z.csv", nil) // sorts before '_'
	s.ResetRequests()
	objs := listKeys(t, s.List(context.Background(), ""))
	if len(objs) != 2 || objs[0].Key != "Z.csv" || objs[1].Key != "a.csv" {
		t.Errorf("List = %+v", objs)
	}
	// One page ends inside _tidemark/; the next starts after it.
	if r := s.Requests()["ListObjectsV2"]; r != 2 {
		t.Errorf("ListObjectsV2 requests = %d, want 2 (not 11)", r)
	}
	if objs := listKeys(t, s.List(context.Background(), "_tidemark/")); len(objs) != 1000 {
		t.Errorf("List(_tidemark/) = %d objects, want 1000", len(objs))
	}
}

// TestListSkippingProbes: with date-named folders, which all sort before
// their _tidemark/, ListSkipping holds at most maxHeld objects and asks S3
// about the folders holding them back, a request per folder at most.
func TestListSkippingProbes(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "in/", func(c *Config) { c.ListPageSize = 100 })
	s.maxHeld = 50 // more than a day folder, less than a month
	const n = 600
	name := func(i int) string { return fmt.Sprintf("2026/%02d/%02d/%04d.csv", 1+i/300, 1+i%300/30, i) }
	putMany(t, s, n, name)
	putBytes(t, s, "2026/02/_tidemark/owner.json", nil) // 2026/02 is a sink: skipped
	putBytes(t, s, "2026/01/05/_tidemark", nil)         // a file marker
	s.ResetRequests()
	var skipped int
	var got []string
	for o, err := range s.ListSkipping(context.Background(), "_tidemark", func(string, objstore.Object) { skipped++ }) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Key)
	}
	var want []string
	for i := range n {
		if k := name(i); !strings.HasPrefix(k, "2026/02/") && !strings.HasPrefix(k, "2026/01/05/") {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) || skipped != n-len(want) {
		t.Errorf("ListSkipping yielded %d keys (skipped %d), want %d (skipped %d)", len(got), skipped, len(want), n-len(want))
	}
	// 602 keys in pages of 100, and a probe for 2026, 2026/01 and 2026/02
	// (days settle as the listing passes them).
	t.Logf("ListObjectsV2 requests: %d", s.Requests()["ListObjectsV2"])
	if r := s.Requests()["ListObjectsV2"]; r < 7 || r > 7+3 {
		t.Errorf("ListObjectsV2 requests = %d, want 7 pages and at most 3 probes", r)
	}
}

func TestListAfter(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "landing/", nil)
	for _, k := range []string{"sales/2026/11/27/a.csv", "sales/2026/11/28/a.csv", "sales/2026/11/28/b.csv",
		"sales/2026/11/28/_tmp/c.csv", "sales/2026/11/29/a.csv", "sales/2026/12/01/a.csv", "sales0/x.csv"} {
		putBytes(t, s, k, []byte(k))
	}
	s.ResetRequests()
	var got []string
	for _, o := range listKeys(t, s.ListAfter(context.Background(), "sales/", "sales/2026/11/28/a.csv")) {
		got = append(got, o.Key)
	}
	want := []string{"sales/2026/11/28/b.csv", "sales/2026/11/29/a.csv", "sales/2026/12/01/a.csv"}
	if !slices.Equal(got, want) {
		t.Errorf("ListAfter = %q, want %q", got, want)
	}
	if r := s.Requests()["ListObjectsV2"]; r != 1 {
		t.Errorf("ListObjectsV2 requests = %d, want 1", r)
	}
	if got := listKeys(t, s.ListAfter(context.Background(), "sales/", "sales/2026/12/01/a.csv")); len(got) != 0 {
		t.Errorf("ListAfter the last key = %+v, want nothing", got)
	}
}

func TestIdentity(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "", nil)
	ctx := context.Background()
	start := time.Now().Truncate(time.Second)
	const n = 20
	bodies := map[string][]byte{}
	for i := range n { // quick puts: several land within one second
		k := fmt.Sprintf("f%02d.csv", i)
		bodies[k] = randomBytes(t, 100+i)
		putBytes(t, s, k, bodies[k])
	}
	end := time.Now()
	objs := listKeys(t, s.List(ctx, ""))
	if len(objs) != n {
		t.Fatalf("listed %d objects, want %d", len(objs), n)
	}
	seconds := map[time.Time]int{}
	for _, o := range objs {
		sum := md5.Sum(bodies[o.Key])
		if o.ETag != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: ETag %q, want the body's MD5 %x", o.Key, o.ETag, sum)
		}
		if o.Size != int64(len(bodies[o.Key])) {
			t.Errorf("%s: size %d, want %d", o.Key, o.Size, len(bodies[o.Key]))
		}
		if o.ModTime.Nanosecond() != 0 || o.ModTime.Before(start) || o.ModTime.After(end) {
			t.Errorf("%s: ModTime %v, want a whole second in [%v, %v]", o.Key, o.ModTime, start, end)
		}
		st, err := s.Stat(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		if st != o {
			t.Errorf("Stat %+v != List %+v", st, o)
		}
		seconds[o.ModTime]++
	}
	shared := 0
	for _, c := range seconds {
		shared = max(shared, c)
	}
	if shared < 2 {
		t.Errorf("no two of %d quick puts share a LastModified second (%v): the test proves nothing", n, seconds)
	}
	t.Logf("%d objects over %d distinct seconds, at most %d in one", n, len(seconds), shared)
}

func TestMultipartPut(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "out/", func(c *Config) { c.PartSize = 5 << 20 })
	body := randomBytes(t, 20<<20+12345)

	s.ResetRequests()
	putBytes(t, s, "big.bin", body)
	r := s.Requests()
	if r["CreateMultipartUpload"] != 1 || r["UploadPart"] != 5 || r["CompleteMultipartUpload"] != 1 || r["PutObject"] != 0 {
		t.Errorf("requests %v, want 1 create, 5 parts, 1 complete", r)
	}
	if got := readAll(t, s, "big.bin"); !bytes.Equal(got, body) {
		t.Errorf("read back %d bytes, not the %d put", len(got), len(body))
	}
	o, err := s.Stat(context.Background(), "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != int64(len(body)) || !strings.HasSuffix(o.ETag, "-5") {
		t.Errorf("Stat = %+v, want size %d and a 5-part ETag", o, len(body))
	}

	// A body of unknown size (no Len, not a file) takes the same path.
	s.ResetRequests()
	body2 := randomBytes(t, 11<<20)
	if err := s.Put(context.Background(), "stream.bin", io.MultiReader(bytes.NewReader(body2[:1000]), bytes.NewReader(body2[1000:]))); err != nil {
		t.Fatal(err)
	}
	if r := s.Requests(); r["UploadPart"] != 3 {
		t.Errorf("requests %v, want 3 parts", r)
	}
	if got := readAll(t, s, "stream.bin"); !bytes.Equal(got, body2) {
		t.Error("streamed body read back differently")
	}

	// Exactly one part's worth goes in one PutObject.
	s.ResetRequests()
	putBytes(t, s, "one.bin", body[:5<<20])
	if r := s.Requests(); r["PutObject"] != 1 || r["CreateMultipartUpload"] != 0 {
		t.Errorf("requests %v, want a single PutObject", r)
	}

	// A file: its size is known up front.
	path := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := s.Put(context.Background(), "file.bin", f); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "file.bin"); !bytes.Equal(got, body) {
		t.Error("file body read back differently")
	}
}

func TestDownload(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "", nil)
	ctx := context.Background()
	body := randomBytes(t, 20<<20+7)
	putBytes(t, s, "in/big.bin", body)
	putBytes(t, s, "in/empty.csv", nil)
	putBytes(t, s, "in/small.csv", []byte("a,b\n"))
	dir := t.TempDir()

	s.ResetRequests()
	dst := filepath.Join(dir, "x", "big.bin")
	o, err := s.Download(ctx, "in/big.bin", dst, 4, 3<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, body) {
		t.Errorf("downloaded %d bytes differ from the %d put", len(got), len(body))
	}
	if o.Size != int64(len(body)) || o.Key != "in/big.bin" {
		t.Errorf("Download returned %+v", o)
	}
	if r := s.Requests(); r["GetObject"] != 7 || r["HeadObject"] != 1 {
		t.Errorf("requests %v, want 1 HEAD and 7 ranged GETs", r)
	}
	for _, k := range []string{"in/empty.csv", "in/small.csv"} {
		dst := filepath.Join(dir, k)
		if _, err := s.Download(ctx, k, dst, 4, 3<<20); err != nil {
			t.Fatal(err)
		}
		if got, want := mustRead(t, dst), readAll(t, s, k); !bytes.Equal(got, want) {
			t.Errorf("%s: downloaded %q, want %q", k, got, want)
		}
	}
	if _, err := s.Download(ctx, "in/missing", filepath.Join(dir, "m"), 4, 0); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("Download of a missing object: %v, want ErrNotExist", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "x"))
	if len(entries) != 1 {
		t.Errorf("download folder holds %d entries, want only the file (no temporaries)", len(entries))
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMoveLargeCopiesInParts(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "", nil)
	s.copyThreshold, s.copyPartSize = 5<<20, 5<<20 // as if 5 GiB
	body := randomBytes(t, 12<<20)
	putBytes(t, s, "_tidemark/staging/r1/data/big.parquet", body)
	s.ResetRequests()
	if err := s.Move(context.Background(), "_tidemark/staging/r1/data/big.parquet", "part-r1-00000.parquet"); err != nil {
		t.Fatal(err)
	}
	if r := s.Requests(); r["UploadPartCopy"] != 3 || r["CopyObject"] != 0 || r["DeleteObject"] != 1 {
		t.Errorf("requests %v, want 3 part copies and a delete", r)
	}
	if got := readAll(t, s, "part-r1-00000.parquet"); !bytes.Equal(got, body) {
		t.Error("moved object differs")
	}
	if _, err := s.Stat(context.Background(), "_tidemark/staging/r1/data/big.parquet"); !errors.Is(err, objstore.ErrNotExist) {
		t.Errorf("source after Move: %v, want ErrNotExist", err)
	}
}

func TestAbortStaleUploads(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	s := newStore(t, srv, "", bucket, "sink/", nil)
	ctx := context.Background()
	// A dead run's upload: created, one part sent, never completed.
	start := func(key string) {
		up, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key),
			UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(randomBytes(t, 5<<20))})
		if err != nil {
			t.Fatal(err)
		}
	}
	start("sink/_tidemark/staging/r1/data/part-0.parquet")
	start("sink/_tidemark/staging/r2/data/part-0.parquet")
	start("elsewhere/_tidemark/staging/r1/x") // outside the store
	uploads := func(prefix string) int {
		out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	if n := uploads(""); n != 3 {
		t.Fatalf("%d uploads in progress, want 3", n)
	}
	n, err := s.AbortStaleUploads(ctx, "_tidemark/staging/", time.Hour, nil)
	if err != nil || n != 0 {
		t.Errorf("AbortStaleUploads(1h) = %d, %v; want 0 (the uploads are fresh)", n, err)
	}
	time.Sleep(1100 * time.Millisecond) // Initiated has one-second resolution
	n, err = s.AbortStaleUploads(ctx, "_tidemark/staging/", time.Second, nil)
	if err != nil || n != 2 {
		t.Errorf("AbortStaleUploads = %d, %v; want 2", n, err)
	}
	if n := uploads("sink/"); n != 0 {
		t.Errorf("%d uploads left under the store, want 0", n)
	}
	if n := uploads("elsewhere/"); n != 1 {
		t.Errorf("%d uploads left outside the store, want 1 (untouched)", n)
	}
}

func TestConfigPrefix(t *testing.T) {
	for loc, want := range map[string][2]string{
		"s3://b":             {"b", ""},
		"s3://b/":            {"b", ""},
		"s3://b/p":           {"b", "p/"},
		"s3://b/p/q/":        {"b", "p/q/"},
		"s3://b//p":          {"b", "p/"},
		"s3://my.bucket/a b": {"my.bucket", "a b/"},
	} {
		c, err := ParseOptions(loc, nil)
		if err != nil {
			t.Errorf("%s: %v", loc, err)
			continue
		}
		if c.Bucket != want[0] || c.Prefix != want[1] {
			t.Errorf("%s: bucket %q prefix %q, want %q %q", loc, c.Bucket, c.Prefix, want[0], want[1])
		}
	}
}

func TestVisible(t *testing.T) {
	for _, tt := range []struct {
		key, prefix string
		want        bool
	}{
		{"a/b.csv", "", true},
		{"_x", "", false},
		{"a/_x/b", "", false},
		{"a/.x", "a/", false},
		{"a/.x", "a/.x", true},
		{"a/_x/b", "a/_x/", true},
		{"a/_x/b", "a/_x", true},
		{"a/_x/b", "a/_", false},
		{"a/_x/_y/c", "a/_x/", false},
		{"p=_1/x", "", true},
	} {
		if got := visible(tt.key, tt.prefix); got != tt.want {
			t.Errorf("visible(%q, %q) = %v, want %v", tt.key, tt.prefix, got, tt.want)
		}
	}
}

func TestConfigStringHidesCredentials(t *testing.T) {
	c := Config{Bucket: "b", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", "")}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c)} {
		if strings.Contains(s, "wJalrXUtnFEMI") {
			t.Errorf("formatted config shows the secret: %s", s)
		}
	}
}

// TestPrepareUpload: a prepared upload is invisible until completed, then
// whole; completing again is harmless; an empty body and a multi-part body
// work; an upload never completed is what AbortStaleUploads' match picks.
func TestPrepareUpload(t *testing.T) {
	srv := s3test.Start(t)
	bucket := srv.NewBucket(t)
	s := newStore(t, srv, "", bucket, "sink/", func(c *Config) { c.PartSize = 5 << 20 })
	ctx := context.Background()
	for _, size := range []int{0, 1000, 12 << 20} {
		key := fmt.Sprintf("part-r1-%05d.parquet", size)
		body := randomBytes(t, size)
		id, err := s.PrepareUpload(ctx, key, bytes.NewReader(body))
		if err != nil {
			t.Fatalf("PrepareUpload(%d bytes): %v", size, err)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, objstore.ErrNotExist) {
			t.Fatalf("%d bytes: before CompleteUpload Stat = %v, want ErrNotExist", size, err)
		}
		for range 2 {
			if err := s.CompleteUpload(ctx, key, id); err != nil {
				t.Fatalf("CompleteUpload(%d bytes): %v", size, err)
			}
		}
		if got := readAll(t, s, key); !bytes.Equal(got, body) {
			t.Fatalf("%d bytes: completed object differs (%d bytes)", size, len(got))
		}
	}

	// Never completed: the match decides what is aborted.
	if _, err := s.PrepareUpload(ctx, "dt=1/part-dead-00000.parquet", bytes.NewReader(randomBytes(t, 100))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PrepareUpload(ctx, "other-tool.bin", bytes.NewReader(randomBytes(t, 100))); err != nil {
		t.Fatal(err)
	}
	n, err := s.AbortStaleUploads(ctx, "", 0, func(k string) bool { return strings.Contains(k, "part-dead-") })
	if err != nil || n != 1 {
		t.Fatalf("AbortStaleUploads = %d, %v; want 1", n, err)
	}
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 1 || aws.ToString(out.Uploads[0].Key) != "sink/other-tool.bin" {
		t.Fatalf("uploads left: %d, want only sink/other-tool.bin", len(out.Uploads))
	}
	if err := s.CompleteUpload(ctx, "dt=1/part-dead-00000.parquet", "no-such-upload"); err == nil {
		t.Fatal("CompleteUpload of an aborted upload: no error")
	}
}

// TestListServerTime: a listing reports the server's clock (the Date header
// of its first response) once, however many pages it takes, and also when
// the prefix holds nothing: timestamp tracking compares LastModified with
// it, not with this machine's clock.
func TestListServerTime(t *testing.T) {
	srv := s3test.Start(t)
	s := newStore(t, srv, "", srv.NewBucket(t), "in/", func(c *Config) { c.ListPageSize = 1 })
	putMany(t, s, 3, func(i int) string { return fmt.Sprintf("f%d.csv", i) })
	for _, prefix := range []string{"", "nothing-here/"} {
		var times []time.Time
		ctx := objstore.WithListTrace(context.Background(), &objstore.ListTrace{ServerTime: func(at time.Time) { times = append(times, at) }})
		listKeys(t, s.List(ctx, prefix))
		if len(times) != 1 {
			t.Fatalf("List(%q): server time reported %d times, want once", prefix, len(times))
		}
		if d := time.Since(times[0]); d < -2*time.Second || d > time.Minute {
			t.Errorf("List(%q): server time %v is %v from the local clock (the server runs here)", prefix, times[0], d)
		}
	}
}
