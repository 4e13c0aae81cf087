package sparktest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster returns the sc:// address of the Spark Connect server that runs
// on the test run's standalone cluster (scripts/test.sh starts one master,
// two workers and that server). Without one the test fails, saying to run
// scripts/test.sh; TIDEMARK_SKIP_SPARK=1 skips it.
func Cluster(tb testing.TB) string {
	tb.Helper()
	if r := os.Getenv("TIDEMARK_TEST_SPARK_CLUSTER"); r != "" {
		return r
	}
	if os.Getenv("TIDEMARK_SKIP_SPARK") == "1" {
		tb.Skip("TIDEMARK_SKIP_SPARK=1: no Spark cluster")
	}
	tb.Fatal("no Spark cluster: run the tests through scripts/test.sh, which starts one and sets TIDEMARK_TEST_SPARK_CLUSTER and TIDEMARK_TEST_SPARK_CLUSTER_MASTER (or set TIDEMARK_SKIP_SPARK=1)")
	return ""
}

// Master returns the spark:// address of the cluster's master, which
// tests give workers of their own to.
func Master(tb testing.TB) string {
	tb.Helper()
	Cluster(tb)
	m := os.Getenv("TIDEMARK_TEST_SPARK_CLUSTER_MASTER")
	if m == "" {
		tb.Fatal("TIDEMARK_TEST_SPARK_CLUSTER_MASTER is not set: run the tests through scripts/test.sh")
	}
	return m
}

// Worker is a private worker of the shared cluster, run as scripts/test.sh
// runs the cluster's own two (one core, 1 GB for executors), in a process
// group of its own with the executors it launches.
type Worker struct {
	// Dir is the worker's folder: its executors' logs are under work/.
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedBuffer
}

// StartWorker starts a worker of the shared cluster and waits until the
// master has registered it; the test's cleanup stops it. The shared
// Connect server's application asks for every core, so the master gives it
// an executor there at once.
func StartWorker(tb testing.TB) *Worker {
	tb.Helper()
	master := Master(tb)
	home := os.Getenv("TIDEMARK_TEST_SPARK_HOME")
	if home == "" {
		tb.Fatal("TIDEMARK_TEST_SPARK_HOME is not set: run the tests through scripts/test.sh")
	}
	w := &Worker{Dir: tb.TempDir(), done: make(chan struct{}), log: &lockedBuffer{}}
	w.cmd = exec.Command(filepath.Join(home, "bin", "spark-class"), "org.apache.spark.deploy.worker.Worker",
		"--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", "0",
		"--work-dir", filepath.Join(w.Dir, "work"), master)
	w.cmd.Env = append(os.Environ(), "SPARK_HOME="+home, "SPARK_LOCAL_IP=127.0.0.1", "SPARK_DAEMON_MEMORY=256m",
		"SPARK_LOCAL_DIRS="+filepath.Join(w.Dir, "local"))
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := w.cmd.Start(); err != nil {
		tb.Fatalf("starting a spark worker: %v", err)
	}
	go func() { _ = w.cmd.Wait(); close(w.done) }()
	tb.Cleanup(w.Stop)
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(w.log.String(), "Successfully registered with master") {
		select {
		case <-w.done:
			tb.Fatalf("spark worker exited before registering with %s:\n%s", master, tail(w.log))
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("spark worker did not register with %s within 3 minutes:\n%s", master, tail(w.log))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return w
}

// ExecutorLog returns what the worker's executors have logged so far
// (their stderr under work/APP/EXECUTOR/).
func (w *Worker) ExecutorLog() string {
	files, _ := filepath.Glob(filepath.Join(w.Dir, "work", "*", "*", "stderr"))
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

// Kill kills the worker and its executors at once (SIGKILL to its process
// group), as when its machine dies.
func (w *Worker) Kill() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	<-w.done
	w.cmd = nil
}

// Stop stops the worker and its executors (SIGTERM, then SIGKILL after
// 10 s).
func (w *Worker) Stop() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-w.done
	}
	w.cmd = nil
}

// lockedBuffer is a process's output, read while it is written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func tail(b fmt.Stringer) string {
	lines := strings.Split(b.String(), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
