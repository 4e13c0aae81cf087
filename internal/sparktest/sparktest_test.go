package sparktest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

// TestReadyWantsSparkItself: a port that accepts connections but is not a
// Spark Connect server (another test's HTTP server took the port) is not a
// started server. In CI a retried run met such a listener.
func TestReadyWantsSparkItself(t *testing.T) {
	h := httptest.NewServer(http.NotFoundHandler())
	defer h.Close()
	port := h.Listener.Addr().(*net.TCPAddr).Port
	s := &Server{Remote: fmt.Sprintf("sc://127.0.0.1:%d", port), Port: port, process: &process{done: make(chan struct{}), log: &syncbuf.Buffer{}}}
	if s.ready(time.Now().Add(3 * time.Second)) {
		t.Fatal("an HTTP server was taken for the Spark Connect server")
	}
	// A server whose process exited is not waited for.
	close(s.done)
	start := time.Now()
	if s.ready(time.Now().Add(time.Minute)) || time.Since(start) > 5*time.Second {
		t.Fatal("ready waited for a server that had exited")
	}
}
