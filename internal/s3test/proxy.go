package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// FaultProxy is an HTTP proxy in front of an S3 server that injects faults
// on demand and counts requests by S3 operation. It forwards requests
// unchanged, Host header included, so SigV4 signatures made for the
// proxy's address stay valid: point the client's endpoint at URL. It
// understands path-style requests only.
type FaultProxy struct {
	URL string // http://127.0.0.1:PORT

	rp *httputil.ReverseProxy

	mu       sync.Mutex
	faults   []*fault
	counts   map[string]int
	byBucket map[[2]string]int // {bucket, operation} -> requests
	byKey    map[[2]string]int // {operation, bucket/key} -> requests
	injected int
}

type faultKind int

const (
	kindStatus faultKind = iota // answer with an S3 error
	kindReset                   // read the request, then reset the connection
	kindDelay                   // wait, then forward
	kindCut                     // forward, then break off the response body
	kindDrop                    // forward, then reset instead of answering
	kindPass                    // forward unchanged (lets requests through before later faults)
)

type fault struct {
	kind   faultKind
	left   int
	ops    []string // empty: any operation
	status int
	code   string
	delay  time.Duration
	after  int64
	bucket string // empty: any bucket
}

type cutKey struct{}

// StartProxy starts a proxy to target (an http:// endpoint) that is closed
// when the test ends.
func StartProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("proxy target %q: %v", target, err)
	}
	p := &FaultProxy{counts: map[string]int{}, byBucket: map[[2]string]int{}, byKey: map[[2]string]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = u.Scheme, u.Host
			r.Out.Host = r.In.Host // the signed host
		},
		ModifyResponse: func(resp *http.Response) error {
			if after, ok := resp.Request.Context().Value(cutKey{}).(int64); ok {
				resp.Body = &cutBody{ReadCloser: resp.Body, left: after}
			}
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0), // injected faults make it complain
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// SlowDown answers the next n matching requests with 503 SlowDown, S3's
// throttling error. ops limits it to those operations (see Operation).
func (p *FaultProxy) SlowDown(n int, ops ...string) {
	p.Fail(n, http.StatusServiceUnavailable, "SlowDown", ops...)
}

// Fail answers the next n matching requests with an S3 error.
func (p *FaultProxy) Fail(n, status int, code string, ops ...string) {
	p.add(&fault{kind: kindStatus, left: n, ops: ops, status: status, code: code})
}

// Reset reads the next n matching requests and resets their connections
// (TCP RST) instead of answering.
func (p *FaultProxy) Reset(n int, ops ...string) {
	p.add(&fault{kind: kindReset, left: n, ops: ops})
}

// DropResponse forwards the next n matching requests, so the server acts
// on them, but resets the connection instead of passing the answer on:
// the client cannot tell whether its request took effect.
func (p *FaultProxy) DropResponse(n int, ops ...string) {
	p.add(&fault{kind: kindDrop, left: n, ops: ops})
}

// Delay holds the next n matching requests for d before forwarding them.
func (p *FaultProxy) Delay(n int, d time.Duration, ops ...string) {
	p.add(&fault{kind: kindDelay, left: n, ops: ops, delay: d})
}

// CutBody forwards the next n matching requests but breaks each response
// off after its first `after` body bytes.
func (p *FaultProxy) CutBody(n int, after int64, ops ...string) {
	p.add(&fault{kind: kindCut, left: n, ops: ops, after: after})
}

// InBucket limits the fault added last to requests for bucket (a run's
// input bucket, say, apart from its output's).
func (p *FaultProxy) InBucket(bucket string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[len(p.faults)-1].bucket = bucket
}

// Pass lets the next n matching requests through unchanged. Faults apply
// in the order they were added, so Pass followed by another fault on the
// same operations aims that fault past the first n requests (a run's
// second listing, say). Passed requests do not count as injected.
func (p *FaultProxy) Pass(n int, ops ...string) {
	p.add(&fault{kind: kindPass, left: n, ops: ops})
}

// Clear drops the faults not yet injected.
func (p *FaultProxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// Injected returns how many faults have been injected.
func (p *FaultProxy) Injected() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected
}

// Count returns how many requests of one operation arrived, faulted or not.
func (p *FaultProxy) Count(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[op]
}

// CountIn returns how many requests of one operation arrived for one
// bucket.
func (p *FaultProxy) CountIn(bucket, op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byBucket[[2]string{bucket, op}]
}

// CountKeys returns how many requests of one operation arrived for the
// objects whose bucket/key path ends with suffix.
func (p *FaultProxy) CountKeys(op, suffix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, v := range p.byKey {
		if k[0] == op && strings.HasSuffix(k[1], suffix) {
			n += v
		}
	}
	return n
}

// Counts returns the request counts by operation.
func (p *FaultProxy) Counts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := make(map[string]int, len(p.counts))
	for k, v := range p.counts {
		m[k] = v
	}
	return m
}

// ResetCounts sets every count back to zero.
func (p *FaultProxy) ResetCounts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.counts)
	clear(p.byBucket)
	clear(p.byKey)
}

func (p *FaultProxy) add(f *fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = append(p.faults, f)
}

// take counts a request and returns the fault to inject into it, if any.
func (p *FaultProxy) take(op, bucket, path string) *fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[op]++
	if p.byKey != nil {
		p.byKey[[2]string{op, path}]++
	}
	if p.byBucket != nil {
		p.byBucket[[2]string{bucket, op}]++
	}
	for _, f := range p.faults {
		if f.left > 0 && (len(f.ops) == 0 || slices.Contains(f.ops, op)) && (f.bucket == "" || f.bucket == bucket) {
			f.left--
			if f.kind == kindPass {
				return nil
			}
			p.injected++
			return f
		}
	}
	return nil
}

// ServeHTTP counts the request, injects the first pending fault that
// matches its operation, or forwards it.
func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, _, _ := strings.Cut(path, "/")
	f := p.take(Operation(r), bucket, path)
	if f == nil {
		p.rp.ServeHTTP(w, r)
		return
	}
	switch f.kind {
	case kindStatus:
		io.Copy(io.Discard, r.Body)
		id := fmt.Sprintf("FAULT%d", time.Now().UnixNano())
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("X-Amz-Request-Id", id)
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
			`<Error><Code>%s</Code><Message>injected by s3test.FaultProxy</Message><RequestId>%s</RequestId></Error>`, f.code, id)
	case kindReset:
		io.Copy(io.Discard, r.Body) // the client now waits for an answer: it sees a reset, not a broken pipe
		reset(w)
	case kindDrop:
		p.rp.ServeHTTP(httptest.NewRecorder(), r)
		reset(w)
	case kindDelay:
		// Read the request first: the server notices a client that gives
		// up only once the body is consumed.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
		p.rp.ServeHTTP(w, r)
	case kindCut:
		p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), cutKey{}, f.after)))
	}
}

// reset closes the client's connection with a TCP RST.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// cutBody ends a response body early with an error; the reverse proxy then
// aborts the connection, and the client sees the body end short.
type cutBody struct {
	io.ReadCloser
	left int64
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("s3test: body cut")
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// Operation names the S3 operation of a path-style request
// ("ListObjectsV2", "GetObject", "UploadPart", ...), or the method, kind
// and query for requests it does not know.
func Operation(r *http.Request) string {
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	q := r.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	copySrc := r.Header.Get("X-Amz-Copy-Source") != ""
	if id := q.Get("x-id"); id != "" {
		return id // aws-sdk-go-v2 names most operations itself
	}
	switch {
	case bucket == "":
		if r.Method == http.MethodGet {
			return "ListBuckets"
		}
	case key == "":
		switch r.Method {
		case http.MethodGet:
			switch {
			case q.Get("list-type") == "2":
				return "ListObjectsV2"
			case has("uploads"):
				return "ListMultipartUploads"
			case has("versions"):
				return "ListObjectVersions"
			case has("location"):
				return "GetBucketLocation"
			case len(q) == 0 || has("prefix") || has("marker") || has("delimiter"):
				return "ListObjects"
			}
		case http.MethodHead:
			return "HeadBucket"
		case http.MethodPut:
			if len(q) == 0 {
				return "CreateBucket"
			}
		case http.MethodDelete:
			if len(q) == 0 {
				return "DeleteBucket"
			}
		case http.MethodPost:
			if has("delete") {
				return "DeleteObjects"
			}
		}
	default:
		switch r.Method {
		case http.MethodGet:
			switch {
			case has("uploadId"):
				return "ListParts"
			case len(q) == 0 || has("partNumber") || has("versionId") || has("x-id"):
				return "GetObject"
			}
		case http.MethodHead:
			return "HeadObject"
		case http.MethodPut:
			switch {
			case has("uploadId") && copySrc:
				return "UploadPartCopy"
			case has("uploadId"):
				return "UploadPart"
			case copySrc:
				return "CopyObject"
			case len(q) == 0 || has("x-id"):
				return "PutObject"
			}
		case http.MethodPost:
			switch {
			case has("uploads"):
				return "CreateMultipartUpload"
			case has("uploadId"):
				return "CompleteMultipartUpload"
			}
		case http.MethodDelete:
			if has("uploadId") {
				return "AbortMultipartUpload"
			}
			return "DeleteObject"
		}
	}
	kind := "object"
	if key == "" {
		kind = "bucket"
	}
	return r.Method + " " + kind + "?" + r.URL.RawQuery
}
