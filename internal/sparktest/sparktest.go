// Package sparktest finds the Spark Connect server the tests use
// (scripts/test.sh starts one for the whole run) and starts private ones
// for tests that kill theirs.
package sparktest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	sparksql "github.com/apache/spark-connect-go/spark/sql"
)

// Remote returns the shared server's sc:// address. Without one the test
// fails, saying to run scripts/test.sh; TIDEMARK_SKIP_SPARK=1 skips it.
func Remote(tb testing.TB) string {
	tb.Helper()
	return shared(tb, "TIDEMARK_TEST_SPARK", "no Spark Connect server", "TIDEMARK_TEST_SPARK")
}

// shared returns the environment variable that scripts/test.sh sets for a
// server it started (what), skips the test under TIDEMARK_SKIP_SPARK=1,
// and fails it otherwise, naming the variables the script sets (vars).
func shared(tb testing.TB, name, what, vars string) string {
	tb.Helper()
	if r := os.Getenv(name); r != "" {
		return r
	}
	if os.Getenv("TIDEMARK_SKIP_SPARK") == "1" {
		tb.Skip("TIDEMARK_SKIP_SPARK=1: " + what)
	}
	tb.Fatalf("%s: run the tests through scripts/test.sh, which starts one and sets %s (or set TIDEMARK_SKIP_SPARK=1)", what, vars)
	return ""
}

// Python returns the venv's python with pyspark's Connect client.
func Python(tb testing.TB) string {
	tb.Helper()
	Remote(tb)
	p := os.Getenv("TIDEMARK_TEST_SPARK_PYTHON")
	if p == "" {
		tb.Fatal("TIDEMARK_TEST_SPARK_PYTHON is not set: run the tests through scripts/test.sh")
	}
	return p
}

// Server is a private Spark Connect server.
type Server struct {
	Remote string
	Port   int
	*process
}

// Start starts a private server on a free loopback port (the same command
// scripts/test.sh runs, one core, less memory, no s3a) and waits until it
// answers a statement; the test's cleanup stops it.
//
// A port that is free when picked can be taken before the JVM binds it
// (the suite's other servers pick free ports too): then the server exits,
// or a listener that is not Spark answers, so a server counts as started
// only when it answers SELECT 1 itself, and is started again on another
// free port (up to three times) when it exited first.
func Start(tb testing.TB) *Server {
	tb.Helper()
	Remote(tb)
	home := os.Getenv("TIDEMARK_TEST_SPARK_HOME")
	if home == "" {
		tb.Fatal("TIDEMARK_TEST_SPARK_HOME is not set: run the tests through scripts/test.sh")
	}
	var last *Server
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := &Server{Remote: fmt.Sprintf("sc://127.0.0.1:%d", port), Port: port}
		args := []string{"--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[1]",
			"--driver-memory", "512m",
			"--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", fmt.Sprintf("spark.connect.grpc.binding.port=%d", port),
			"--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
			"--conf", "spark.driver.extraJavaOptions=-XX:+UseSerialGC"}
		// No s3a jars: the tests that start private servers read local files.
		s.process = start(tb, "a spark connect server", filepath.Join(home, "bin", "spark-submit"), args, []string{"SPARK_HOME=" + home})
		tb.Cleanup(s.Stop)
		if s.ready(time.Now().Add(4 * time.Minute)) {
			return s
		}
		s.Stop()
		last = s
	}
	tb.Fatalf("spark connect server did not answer on port %d within 4 minutes:\n%s", last.Port, last.tail())
	return nil
}

// ready waits until the server answers SELECT 1, or its process exits, or
// the deadline passes; it reports whether it answered. The first statement
// also warms the server, so that a test's first run does not pay for its
// cold start.
func (s *Server) ready(deadline time.Time) bool {
	for time.Now().Before(deadline) {
		if s.exited() {
			return false
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second); err == nil {
			c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			ok := s.answers(ctx)
			cancel()
			if ok {
				return true
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// answers reports whether the server runs SELECT 1.
func (s *Server) answers(ctx context.Context) bool {
	sess, err := sparksql.NewSessionBuilder().Remote(s.Remote).Build(ctx)
	if err != nil {
		return false
	}
	df, err := sess.Sql(ctx, "SELECT 1")
	if err != nil {
		return false
	}
	_, err = df.Collect(ctx)
	return err == nil
}
