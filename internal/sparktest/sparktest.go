// Package sparktest finds the Spark Connect server the tests use
// (scripts/test.sh starts one for the whole run) and starts private ones
// for tests that kill theirs.
package sparktest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sparksql "github.com/apache/spark-connect-go/spark/sql"
)

// Remote returns the shared server's sc:// address. Without one the test
// fails, saying to run scripts/test.sh; TIDEMARK_SKIP_SPARK=1 skips it.
func Remote(tb testing.TB) string {
	tb.Helper()
	if r := os.Getenv("TIDEMARK_TEST_SPARK"); r != "" {
		return r
	}
	if os.Getenv("TIDEMARK_SKIP_SPARK") == "1" {
		tb.Skip("TIDEMARK_SKIP_SPARK=1: no Spark Connect server")
	}
	tb.Fatal("no Spark Connect server: run the tests through scripts/test.sh, which starts one and sets TIDEMARK_TEST_SPARK (or set TIDEMARK_SKIP_SPARK=1)")
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
	cmd    *exec.Cmd
	log    *bytes.Buffer
	tb     testing.TB
}

// Start starts a private server on a free loopback port (the same command
// scripts/test.sh runs, one core, less memory, no s3a) and waits until it
// listens; the test's cleanup
// stops it. port 0 picks one.
func Start(tb testing.TB, port int) *Server {
	tb.Helper()
	Remote(tb)
	home := os.Getenv("TIDEMARK_TEST_SPARK_HOME")
	if home == "" {
		tb.Fatal("TIDEMARK_TEST_SPARK_HOME is not set: run the tests through scripts/test.sh")
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	s := &Server{Remote: fmt.Sprintf("sc://127.0.0.1:%d", port), Port: port, log: &bytes.Buffer{}, tb: tb}
	args := []string{"--class", "org.apache.spark.sql.connect.service.SparkConnectServer", "--master", "local[1]",
		"--driver-memory", "512m",
		"--conf", "spark.connect.grpc.binding.address=127.0.0.1", "--conf", fmt.Sprintf("spark.connect.grpc.binding.port=%d", port),
		"--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
		"--conf", "spark.driver.extraJavaOptions=-XX:+UseSerialGC"}
	// No s3a jars: the tests that start private servers read local files.
	s.cmd = exec.Command(filepath.Join(home, "bin", "spark-submit"), args...)
	s.cmd.Env = append(os.Environ(), "SPARK_HOME="+home)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		tb.Fatalf("starting a spark connect server: %v", err)
	}
	tb.Cleanup(s.Stop)
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			s.warm(deadline)
			return s
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.Stop()
	tb.Fatalf("spark connect server on port %d did not listen within 4 minutes:\n%s", port, s.tail())
	return nil
}

// Kill kills the server at once (SIGKILL to its process group).
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	s.cmd = nil
}

func (s *Server) tail() string {
	lines := strings.Split(s.log.String(), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

// warm runs a first statement, so that a test's first run does not pay
// for the server's cold start (its first session takes long).
func (s *Server) warm(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	sess, err := sparksql.NewSessionBuilder().Remote(s.Remote).Build(ctx)
	if err != nil {
		return
	}
	if df, err := sess.Sql(ctx, "SELECT 1"); err == nil {
		_, _ = df.Collect(ctx)
	}
}
