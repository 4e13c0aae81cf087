// Package s3test starts real S3 servers for tests: versitygw
// (github.com/versity/versitygw) serving a temporary folder over loopback,
// and a fault-injecting proxy to put in front of it.
//
// versitygw must be installed; scripts/test.sh installs it. A test that
// needs it fails when it is missing, unless TIDEMARK_SKIP_S3=1 is set (for
// a quick local run; CI never sets it, so S3 tests cannot pass by being
// skipped).
package s3test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/build"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"golang.org/x/sys/unix"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

// Version is the versitygw release scripts/test.sh installs.
const Version = "v1.8.0"

// Server is a running versitygw.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string
	Dir       string // the posix backend's root: one folder per bucket

	cmd       *exec.Cmd
	logs      *syncbuf.Buffer
	exited    chan error
	closeOnce sync.Once
}

// Binary returns the path of versitygw: on PATH, else in GOBIN or
// GOPATH/bin where `go install` puts it.
func Binary() (string, error) {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, gp := range filepath.SplitList(gopath()) {
		dirs = append(dirs, filepath.Join(gp, "bin"))
	}
	// `go env` also knows settings made with `go env -w`.
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) == 2 {
			if lines[0] != "" {
				dirs = append(dirs, lines[0])
			}
			for _, gp := range filepath.SplitList(lines[1]) {
				dirs = append(dirs, filepath.Join(gp, "bin"))
			}
		}
	}
	dirs = slices.Compact(dirs)
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("versitygw not found on PATH or in %s", strings.Join(dirs, ", "))
}

// gopath is go env GOPATH (a variable for tests).
var gopath = func() string { return build.Default.GOPATH }

// Start starts versitygw on a free loopback port with fresh root
// credentials and an empty folder, waits until it answers, and stops it
// when the test ends. It fails the test if versitygw is not installed
// (skips it only under TIDEMARK_SKIP_S3=1).
func Start(t testing.TB) *Server {
	t.Helper()
	bin := RequireBinary(t)
	s, err := launch(bin, t.TempDir())
	if err != nil {
		t.Fatalf("starting versitygw: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			if l := s.Logs(); l != "" {
				t.Logf("versitygw output:\n%s", l)
			}
		}
	})
	return s
}

// RequireBinary returns the path of versitygw, or fails the test saying
// how to install it (skips it only under TIDEMARK_SKIP_S3=1).
func RequireBinary(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("TIDEMARK_SKIP_S3") == "1" {
			t.Skipf("S3 test skipped (TIDEMARK_SKIP_S3=1): %v", err)
		}
		t.Fatalf("%v: run scripts/test.sh, which installs it (go install github.com/versity/versitygw/cmd/versitygw@%s); "+
			"set TIDEMARK_SKIP_S3=1 to skip S3 tests locally", err, Version)
	}
	return bin
}

// Launch starts versitygw (the binary bin, from RequireBinary) serving
// dir, outside any one test: for a package that shares one server among
// its tests from TestMain. The caller stops it with Close and removes dir.
func Launch(bin, dir string) (*Server, error) { return launch(bin, dir) }

func launch(bin, dir string) (*Server, error) {
	var lastErr error
	for range 3 { // a free port can be taken between probing and binding
		s, err := start(bin, dir)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func start(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		Endpoint:  "http://" + port,
		AccessKey: "tidemark" + randomHex(6),
		SecretKey: randomHex(20),
		Region:    "us-east-1",
		Dir:       dir,
		logs:      &syncbuf.Buffer{Limit: 1 << 20},
		exited:    make(chan error, 1),
	}
	// --quiet drops per-request log lines (errors still reach stderr);
	// --keep-alive reuses connections as S3 does (versitygw closes each
	// one after a response without it).
	s.cmd = exec.Command(bin, "--port", port, "--quiet", "--keep-alive", "posix", s.Dir)
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exited <- s.cmd.Wait() }()
	deadline := time.After(30 * time.Second)
	for {
		if resp, err := http.Get(s.Endpoint + "/"); err == nil {
			resp.Body.Close() // any answer (403 for an unsigned request) means it serves
			return s, nil
		}
		select {
		case err := <-s.exited:
			return nil, fmt.Errorf("versitygw exited (%v): %s", err, s.logs.String())
		case <-deadline:
			s.cmd.Process.Kill()
			<-s.exited
			return nil, fmt.Errorf("versitygw did not answer on %s within 30s: %s", port, s.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close stops the server. The data is thrown away anyway, so it does not
// wait long for a graceful shutdown (which waits for clients' idle
// keep-alive connections to go).
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(500 * time.Millisecond):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// Logs returns what versitygw printed (errors, with --quiet).
func (s *Server) Logs() string { return s.logs.String() }

// CreateBucket creates a bucket (names are 3-63 lowercase letters, digits
// and hyphens).
func (s *Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	if err := s.do(context.Background(), http.MethodPut, "/"+name, nil); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
}

// NewBucket creates a bucket with a fresh name and returns the name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := "tm-" + randomHex(8)
	s.CreateBucket(t, name)
	return name
}

// Environ returns the AWS_* variables that point an SDK client (or the
// tidemark binary) at this server with its root credentials.
func (s *Server) Environ() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
		"AWS_ENDPOINT_URL_S3=" + s.Endpoint,
	}
}

// SetEnv sets Environ's variables for the test (and clears ones that could
// override them), so code using the standard AWS chain reaches the server.
// Like t.Setenv, it cannot be used in parallel tests.
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, k := range []string{"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
}

// ObjectPath is the file under which the posix backend keeps an object:
// Dir/bucket/key. Its mtime is the object's LastModified, so a test can
// give an object an old LastModified with os.Chtimes (real S3 cannot; its
// nearest case is a multipart upload, whose LastModified is the time the
// upload started).
func (s *Server) ObjectPath(bucket, key string) string {
	return filepath.Join(s.Dir, bucket, filepath.FromSlash(key))
}

// WriteObjectFile creates an object by writing its file straight into the
// posix folder, with the ETag that a PUT would have stored (an extended
// attribute): far faster than PUTs for tests that need many objects.
// versitygw lists and serves such files like uploaded objects.
func (s *Server) WriteObjectFile(bucket, key string, data []byte) error {
	p := s.ObjectPath(bucket, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return err
	}
	sum := md5.Sum(data)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	if err := unix.Setxattr(p, "user.etag", []byte(etag), 0); err != nil {
		return fmt.Errorf("setting the ETag of %s (the posix backend keeps it in an xattr): %w", p, err)
	}
	return nil
}

// LinkObjectFile creates the object key as a hard link to the file of the
// existing object from: the same bytes, ETag and LastModified, at the cost
// of one directory entry (several times faster than WriteObjectFile, for
// tests that need a great many objects whose contents do not matter).
func (s *Server) LinkObjectFile(bucket, from, key string) error {
	p := s.ObjectPath(bucket, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.Link(s.ObjectPath(bucket, from), p)
}

// do sends one SigV4-signed request.
func (s *Server) do(ctx context.Context, method, path string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, s.Endpoint+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, "s3", s.Region, time.Now()); err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b.String())
	}
	return nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
