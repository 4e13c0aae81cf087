package s3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// faultHTTP sits in front of the real server (as the store's HTTP client)
// and injects faults into the requests that match a rule: an S3 error
// answered before the request is forwarded, or the answer of a forwarded
// request lost (the server acted on it; the client gets a broken
// connection). It also counts requests by method.
type faultHTTP struct {
	next aws.HTTPClient

	mu     sync.Mutex
	rules  []*faultRule
	counts map[string]int // "PUT", "GET", ...
	hits   int            // faults injected
}

// faultRule fails requests of method whose path contains key: after skip
// matching requests pass, the next times ones fail.
type faultRule struct {
	method, key string
	skip, times int
	status      int    // answer this status before forwarding
	lose        bool   // forward, then lose the answer
	before      func() // run, then forward (a host stalled there while others act)
}

// wrap is Options.WrapHTTP for f.
func (f *faultHTTP) wrap(next aws.HTTPClient) aws.HTTPClient {
	f.next = next
	return f
}

// add adds a rule.
func (f *faultHTTP) add(r faultRule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &r)
}

// injected returns how many faults were injected.
func (f *faultHTTP) injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

// count returns how many requests of method were sent.
func (f *faultHTTP) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[method]
}

// Do forwards r, or injects the fault of the first matching rule.
func (f *faultHTTP) Do(r *http.Request) (*http.Response, error) {
	f.mu.Lock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[r.Method]++
	var hit *faultRule
	for _, rule := range f.rules {
		if rule.method != r.Method || !strings.Contains(r.URL.Path, rule.key) || rule.times == 0 {
			continue
		}
		if rule.skip > 0 {
			rule.skip--
			continue
		}
		rule.times--
		hit = rule
		f.hits++
		break
	}
	f.mu.Unlock()
	switch {
	case hit == nil:
		return f.next.Do(r)
	case hit.before != nil:
		hit.before()
		return f.next.Do(r)
	case hit.lose:
		resp, err := f.next.Do(r)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, errors.New("read tcp: connection reset by peer (answer lost by the test)")
	default:
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		code := map[int]string{412: "PreconditionFailed", 409: "ConditionalRequestConflict", 503: "SlowDown"}[hit.status]
		body := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected by the test</Message></Error>`, code)
		h := http.Header{}
		h.Set("Content-Type", "application/xml")
		return &http.Response{StatusCode: hit.status, Status: fmt.Sprintf("%d %s", hit.status, http.StatusText(hit.status)),
			Header: h, Body: io.NopCloser(bytes.NewReader([]byte(body))), ContentLength: int64(len(body)),
			Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	}
}
