package sparktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Cluster returns the sc:// address of the Spark Connect server that runs
// on the test run's standalone cluster (scripts/test.sh starts one master,
// two workers and that server). Without one the test fails, saying to run
// scripts/test.sh; TIDEMARK_SKIP_SPARK=1 skips it.
func Cluster(tb testing.TB) string {
	tb.Helper()
	return shared(tb, "TIDEMARK_TEST_SPARK_CLUSTER", "no Spark cluster", "TIDEMARK_TEST_SPARK_CLUSTER and TIDEMARK_TEST_SPARK_CLUSTER_MASTER")
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
	Dir string
	*process
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
	w := &Worker{Dir: tb.TempDir()}
	w.process = start(tb, "a spark worker", filepath.Join(home, "bin", "spark-class"),
		[]string{"org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
			"--webui-port", "0", "--work-dir", filepath.Join(w.Dir, "work"), master},
		[]string{"SPARK_HOME=" + home, "SPARK_LOCAL_IP=127.0.0.1", "SPARK_DAEMON_MEMORY=256m",
			"SPARK_LOCAL_DIRS=" + filepath.Join(w.Dir, "local")})
	tb.Cleanup(w.Stop)
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(w.log.String(), "Successfully registered with master") {
		if w.exited() {
			tb.Fatalf("spark worker exited before registering with %s:\n%s", master, w.tail())
		}
		if time.Now().After(deadline) {
			tb.Fatalf("spark worker did not register with %s within 3 minutes:\n%s", master, w.tail())
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
