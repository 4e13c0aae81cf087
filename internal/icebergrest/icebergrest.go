// Package icebergrest starts Apache Iceberg's reference REST catalog for
// tests: RestCatalog.java (next to this file) run by Java's source
// launcher with the iceberg-open-api jar, which bundles the server, on a
// loopback port. scripts/test.sh fetches the jar by its Maven coordinates
// and names it in TIDEMARK_TEST_ICEBERG_REST_JAR.
package icebergrest

import (
	"bufio"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

// Catalog is a running REST catalog.
type Catalog struct {
	// URI is its base URI, http://127.0.0.1:PORT.
	URI string
	// Warehouse is the folder its tables go in unless created elsewhere.
	Warehouse string
}

// Start starts a REST catalog whose tables and database live in the
// test's temporary folders; it is stopped when the test ends.
func Start(tb testing.TB) *Catalog {
	tb.Helper()
	jar := os.Getenv("TIDEMARK_TEST_ICEBERG_REST_JAR")
	if jar == "" {
		tb.Fatal("TIDEMARK_TEST_ICEBERG_REST_JAR is not set: run the tests through scripts/test.sh, which fetches " +
			"org.apache.iceberg:iceberg-open-api (the REST catalog server)")
	}
	_, self, _, _ := runtime.Caller(0)
	launcher := filepath.Join(filepath.Dir(self), "RestCatalog.java")
	dir := tb.TempDir()
	wh := filepath.Join(dir, "warehouse")
	if err := os.MkdirAll(wh, 0o755); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", jar, launcher,
		(&url.URL{Scheme: "file", Path: wh}).String(), filepath.Join(dir, "catalog.db"))
	var errs syncbuf.Buffer
	cmd.Stderr = &errs
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting the Iceberg REST catalog: %v", err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				port <- p
			}
		}
		close(port)
	}()
	select {
	case p, ok := <-port:
		if !ok {
			tb.Fatalf("the Iceberg REST catalog exited before listening:\n%s", tail(errs.String()))
		}
		return &Catalog{URI: "http://127.0.0.1:" + p, Warehouse: wh}
	case <-time.After(3 * time.Minute):
		tb.Fatalf("the Iceberg REST catalog did not listen within 3 minutes:\n%s", tail(errs.String()))
	}
	return nil
}

// tail is the end of the server's log, for a failure message.
func tail(s string) string {
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}
