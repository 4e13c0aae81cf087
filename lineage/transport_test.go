package lineage_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
	"github.com/tidemark-etl/tidemark/lineage"
)

// baseline is how long one run takes with an endpoint that answers.
func baseline(t *testing.T, d *jobDir) time.Duration {
	t.Helper()
	rc := newReceiver(t)
	d.put("base.csv", "id,v\n1,x\n")
	_, took, _, err := run(t, d.spec(""), lineage.Config{URL: rc.URL}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return took
}

// TestEndpointHangs: an endpoint that never answers neither fails nor
// slows the run; the events are given up after the drain wait, logged.
func TestEndpointHangs(t *testing.T) {
	d := newJobDir(t)
	base := baseline(t, d)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	d.put("a.csv", "id,v\n1,x\n")
	start := time.Now()
	res, took, logs, err := run(t, d.spec(""), lineage.Config{URL: srv.URL, Timeout: 10 * time.Second}, 500*time.Millisecond)
	total := time.Since(start)
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("run: %v, want it to succeed", err)
	}
	if took > base+time.Second {
		t.Errorf("the run took %s with a hanging endpoint, %s with a live one", took, base)
	}
	if total > took+1500*time.Millisecond {
		t.Errorf("closing the client took %s, want at most the 500ms drain wait", total-took)
	}
	if !strings.Contains(logs, "lineage") {
		t.Errorf("nothing logged about the events not sent:\n%s", logs)
	}
}

// TestEndpointDown: an endpoint that refuses connections neither fails
// nor slows the run; each failed event is logged.
func TestEndpointDown(t *testing.T) {
	d := newJobDir(t)
	base := baseline(t, d)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	d.put("a.csv", "id,v\n1,x\n")
	res, took, logs, err := run(t, d.spec(""), lineage.Config{URL: url}, 2*time.Second)
	if err != nil || res.Status != "succeeded" {
		t.Fatalf("run: %v, want it to succeed", err)
	}
	if took > base+time.Second {
		t.Errorf("the run took %s with the endpoint down, %s with it up", took, base)
	}
	if n := strings.Count(logs, "lineage: sending event"); n != 2 {
		t.Errorf("got %d failures logged, want 2 (START, COMPLETE):\n%s", n, logs)
	}
}

// TestQueueBounded: a full queue drops events, logged, without blocking.
func TestQueueBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var logs syncbuf.Buffer
	c, err := lineage.NewClient(lineage.Config{URL: srv.URL, Queue: 2}, slogTo(&logs))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 10 {
		c.Send(lineage.RunEvent{EventType: lineage.EventStart})
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("10 sends took %s: Send blocks", d)
	}
	c.Close(100 * time.Millisecond)
	if n := strings.Count(logs.String(), "queue full"); n < 7 {
		t.Errorf("got %d drops logged, want at least 7 of 10 (queue 2, one in flight):\n%s", n, logs.String())
	}
}
