package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tidemark-etl/tidemark/internal/s3test"
)

// gateway is a versitygw serving a folder over loopback, started by an S3
// scenario the way internal/s3test starts it for the tests (--quiet
// --keep-alive, posix backend, fresh root credentials).
type gateway struct {
	endpoint  string // http://127.0.0.1:PORT
	accessKey string
	secretKey string
	region    string
	dir       string // the posix root: one folder per bucket
	version   string
	cmd       *exec.Cmd
	done      chan struct{}
	// files writes objects straight into the posix folder, as the e2e
	// tests do (only its Dir is used).
	files *s3test.Server
}

// startGateway starts versitygw (from PATH, GOBIN or GOPATH/bin) serving
// dir.
func startGateway(ctx context.Context, dir string) (*gateway, error) {
	bin, err := s3test.Binary()
	if err != nil {
		return nil, fmt.Errorf("%w (scripts/test.sh installs it: go install github.com/versity/versitygw/cmd/versitygw@%s)", err, s3test.Version)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	version := gatewayVersion(ctx, bin)
	var lastErr error
	for range 3 { // a free port can be taken between probing and binding
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		g := &gateway{endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), accessKey: "bench" + randomHex(6),
			secretKey: randomHex(20), region: "us-east-1", dir: dir, version: version, files: &s3test.Server{Dir: dir}}
		g.cmd = exec.Command(bin, "--port", fmt.Sprintf("127.0.0.1:%d", port), "--quiet", "--keep-alive", "posix", dir)
		g.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+g.accessKey, "ROOT_SECRET_KEY="+g.secretKey)
		g.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		out, err := os.Create(filepath.Join(filepath.Dir(dir), "versitygw.log"))
		if err != nil {
			return nil, err
		}
		g.cmd.Stdout, g.cmd.Stderr = out, out
		if err := g.cmd.Start(); err != nil {
			out.Close()
			return nil, fmt.Errorf("starting versitygw: %w", err)
		}
		g.done = make(chan struct{})
		go func() { g.cmd.Wait(); out.Close(); close(g.done) }()
		if lastErr = g.waitReady(ctx); lastErr == nil {
			logf("started versitygw %s on %s serving %s", version, g.endpoint, dir)
			return g, nil
		}
		g.stop()
	}
	return nil, lastErr
}

// gatewayVersion is versitygw's module version from its build info (`go
// install` builds print "git" for --version), else what --version says.
func gatewayVersion(ctx context.Context, bin string) string {
	for _, line := range strings.Split(commandLine(ctx, "", "go", "version", "-m", bin), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/versity/versitygw" {
			return f[2]
		}
	}
	v := firstLine(commandLine(ctx, "", bin, "--version"))
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = strings.TrimSpace(after)
	}
	return orDash(v)
}

func (g *gateway) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(g.endpoint + "/"); err == nil {
			resp.Body.Close() // any answer (403 for an unsigned request) means it serves
			return nil
		}
		select {
		case <-g.done:
			return fmt.Errorf("versitygw exited at start (see versitygw.log)")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("versitygw did not answer on %s within 30s", g.endpoint)
		}
	}
}

// stop stops versitygw; it does not wait long for idle keep-alive
// connections to go.
func (g *gateway) stop() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(2 * time.Second):
		g.cmd.Process.Kill()
		<-g.done
	}
}

// cpu is the CPU time versitygw has used so far.
func (g *gateway) cpu() time.Duration {
	if g == nil || g.cmd == nil || g.cmd.Process == nil {
		return 0
	}
	return treeCPU(g.cmd.Process.Pid)
}

// environ points tidemark (the standard AWS chain) at endpoint with the
// gateway's root credentials, and keeps any profile or shared config on
// this machine out of the way.
func (g *gateway) environ(endpoint, scratch string) []string {
	none := filepath.Join(scratch, "no-aws-config")
	return []string{
		"AWS_ACCESS_KEY_ID=" + g.accessKey,
		"AWS_SECRET_ACCESS_KEY=" + g.secretKey,
		"AWS_REGION=" + g.region,
		"AWS_ENDPOINT_URL=" + endpoint,
		"AWS_ENDPOINT_URL_S3=",
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_CONFIG_FILE=" + none,
		"AWS_SHARED_CREDENTIALS_FILE=" + none,
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// createBuckets creates buckets through the S3 API (a bucket of the
// posix backend is a folder with metadata that versitygw writes).
func (g *gateway) createBuckets(ctx context.Context, names ...string) error {
	client := s3.New(s3.Options{
		Region:       g.region,
		BaseEndpoint: aws.String(g.endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(g.accessKey, g.secretKey, ""),
	})
	for _, name := range names {
		if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
			return fmt.Errorf("creating bucket %s: %w", name, err)
		}
	}
	return nil
}

// countingProxy forwards requests to an S3 endpoint unchanged (Host header
// included, so signatures made for the proxy's address stay valid) and
// counts them by bucket and S3 operation, named as internal/s3test names
// them.
type countingProxy struct {
	url string
	srv *http.Server

	mu     sync.Mutex
	counts map[[2]string]int // {bucket, operation}
	events []request         // since the last take
}

// request is one forwarded request, for a timeline.
type request struct {
	op         string
	start, end time.Time
	bytes      int64 // body bytes sent or received
}

func startCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + l.Addr().String(), counts: map[[2]string]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = u.Scheme, u.Host
			r.Out.Host = r.In.Host // the signed host
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		op := s3test.Operation(r)
		p.mu.Lock()
		p.counts[[2]string{bucket, op}]++
		p.mu.Unlock()
		cw := &countingWriter{ResponseWriter: w}
		start := time.Now()
		rp.ServeHTTP(cw, r)
		req := request{op: op, start: start, end: time.Now(), bytes: cw.n + max(0, r.ContentLength)}
		p.mu.Lock()
		p.events = append(p.events, req)
		p.mu.Unlock()
	})}
	go p.srv.Serve(l)
	return p, nil
}

func (p *countingProxy) close() { p.srv.Close() }

// take returns the counts so far and sets them back to zero.
func (p *countingProxy) take() requestCounts {
	c, _ := p.takeAll()
	return c
}

// takeAll returns the counts and the requests so far, and forgets them.
func (p *countingProxy) takeAll() (requestCounts, []request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ev := requestCounts(p.counts), p.events
	p.counts, p.events = map[[2]string]int{}, nil
	return c, ev
}

// countingWriter counts the response body bytes.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// Flush lets the reverse proxy flush through the wrapper.
func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// timeline summarizes requests by operation, in the order each operation
// first appeared: how many, their bytes, and when the first started and
// the last ended, in seconds after t0.
func timeline(t0 time.Time, reqs []request) [][]string {
	type agg struct {
		n          int
		bytes      int64
		first, end time.Time
		busy       time.Duration
	}
	byOp := map[string]*agg{}
	var order []string
	for _, r := range reqs {
		a := byOp[r.op]
		if a == nil {
			a = &agg{first: r.start}
			byOp[r.op] = a
			order = append(order, r.op)
		}
		a.n++
		a.bytes += r.bytes
		if r.start.Before(a.first) {
			a.first = r.start
		}
		if r.end.After(a.end) {
			a.end = r.end
		}
		a.busy += r.end.Sub(r.start)
	}
	slices.SortStableFunc(order, func(x, y string) int { return byOp[x].first.Compare(byOp[y].first) })
	var rows [][]string
	for _, op := range order {
		a := byOp[op]
		rows = append(rows, []string{op, thousands(int64(a.n)), mb(a.bytes),
			fmt.Sprintf("%.2f s", a.first.Sub(t0).Seconds()), fmt.Sprintf("%.2f s", a.end.Sub(t0).Seconds()),
			fmt.Sprintf("%.2f s", a.end.Sub(a.first).Seconds())})
	}
	return rows
}

// requestCounts are requests by {bucket, operation}.
type requestCounts map[[2]string]int

// op counts one operation, on one bucket or ("") on all.
func (c requestCounts) op(bucket, op string) int {
	n := 0
	for k, v := range c {
		if k[1] == op && (bucket == "" || k[0] == bucket) {
			n += v
		}
	}
	return n
}

func (c requestCounts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// String lists the operations, most requests first: "ListObjectsV2 101,
// HeadBucket 2".
func (c requestCounts) String() string {
	byOp := map[string]int{}
	for k, v := range c {
		byOp[k[1]] += v
	}
	ops := make([]string, 0, len(byOp))
	for op := range byOp {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b string) int {
		if byOp[a] != byOp[b] {
			return byOp[b] - byOp[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = op + " " + thousands(int64(byOp[op]))
	}
	return strings.Join(parts, ", ")
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
