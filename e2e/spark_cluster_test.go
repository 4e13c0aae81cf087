package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
)

// onSparkCluster is the local backend with the job on `engine: spark`, on
// the test run's standalone cluster (a master, two workers, a Spark Connect
// server on it: scripts/test.sh starts them). The executors, separate JVMs,
// read the landing folder and write the staging folder themselves: a local
// folder, which every JVM of the one machine sees.
const onSparkCluster backend = "spark-cluster"

// onSparkClusterS3 is the S3 backend (versitygw) on the cluster: the
// executors read the sources through s3a.
const onSparkClusterS3 backend = "spark-cluster-s3"

// sparkClusterEngine is the engine line of a job on the cluster.
func sparkClusterEngine(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("engine: {spark: {remote: %q}}", sparktest.Cluster(t))
}

// A day-by-day body on the cluster, on local folders and on S3 (where the
// executors read through s3a), and the crash tests on local folders (their
// S3 side is tidemark's staging and upload, the same on every engine).
func TestSparkClusterThreeDays(t *testing.T)   { t.Parallel(); testThreeDays(t, onSparkCluster) }
func TestSparkClusterThreeDaysS3(t *testing.T) { t.Parallel(); testThreeDays(t, onSparkClusterS3) }
func TestSparkClusterFaultAtEachStep(t *testing.T) {
	t.Parallel()
	testFaultAtEachStep(t, onSparkCluster)
}

// slowOrders is cleanOrders with every row held 250 ms in the executor
// that reads it, so that a worker can be killed while its executor runs the
// run's tasks. java_method returns the text "null" for a void method, or
// NULL: the length of its coalesce is never negative, so every row is kept.
// The predicate must not be one Spark's optimizer can prove true: it drops
// a coalesce with a constant under IS NOT NULL (never null: true) with the
// sleep, and the test then passed only when a cold executor happened to
// spend a second on its first task.
const slowOrders = cleanOrders + ` WHERE length(coalesce(java_method('java.lang.Thread', 'sleep', 250L), '')) >= 0`

// sparkTask is an executor's log line for a task it starts or finishes.
var sparkTask = regexp.MustCompile(`(Running|Finished) task \S+ in stage \S+ \(TID (\d+)\)`)

// runningTasks returns the task ids an executor log shows started and not
// finished.
func runningTasks(log string) []string {
	open := map[string]bool{}
	for _, m := range sparkTask.FindAllStringSubmatch(log, -1) {
		open[m[2]] = m[1] == "Running"
	}
	var ids []string
	for id, running := range open {
		if running {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestSparkClusterWorkerKilledMidRun: a worker of the cluster dies (SIGKILL
// to it and its executor, as when its machine goes) while its executor runs
// the run's tasks. The run either succeeds with every row exactly once
// (Spark ran the lost tasks again on the other workers), or fails cleanly:
// exit 1, nothing published, the bookmark where it was; then the next run
// publishes every row exactly once. The killed worker is one the test adds
// to the shared cluster: the cluster's own two stay for the other tests.
func TestSparkClusterWorkerKilledMidRun(t *testing.T) {
	t.Parallel()
	w := sparktest.StartWorker(t)
	// The Connect server's application takes every core it is offered:
	// wait for its executor on the new worker.
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(w.ExecutorLog(), "Successfully registered with driver") {
		if time.Now().After(deadline) {
			t.Fatalf("no executor of the cluster's Connect server registered on the new worker within 3 minutes:\n%s", w.ExecutorLog())
		}
		time.Sleep(200 * time.Millisecond)
	}

	f := newFixtureOn(t, onSparkCluster, jobOpts{transform: slowOrders})
	monday := f.addCSVs("monday", 1, 4)
	f.mustRun()
	before := f.bookmark()
	filesBefore := relFiles(t, f.outDir())
	// Six files of 20 rows: six tasks of 5 s each over three executors.
	tuesday := f.addCSVs("tuesday", 6, 20)

	p := f.start(nil, "run", f.jobPath, "--json")
	// Kill the worker while its executor runs one of the run's tasks: one
	// that has run for a second (other tests' tasks on the cluster, which
	// may run there too, take well under that; Spark runs theirs again
	// elsewhere).
	since := map[string]time.Time{}
	var killed []string
	deadline = time.Now().Add(3 * time.Minute)
	for {
		now := time.Now()
		running := map[string]bool{}
		for _, id := range runningTasks(w.ExecutorLog()) {
			running[id] = true
			if _, ok := since[id]; !ok {
				since[id] = now
			}
			if now.Sub(since[id]) >= time.Second {
				killed = append(killed, id)
			}
		}
		for id := range since {
			if !running[id] {
				delete(since, id)
			}
		}
		if len(killed) > 0 {
			break
		}
		if p.exited() {
			t.Fatalf("the run ended before the new worker's executor ran any of its tasks\n%v", p.wait(t))
		}
		if now.After(deadline) {
			t.Fatalf("the new worker's executor ran no task of the run within 3 minutes of its start:\n%s", w.ExecutorLog())
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.Kill()
	r := p.wait(t)
	all := concat(monday, tuesday)
	switch r.code {
	case 0:
		t.Logf("the worker was killed running tasks %v; the run succeeded (Spark ran them again elsewhere)", killed)
		f.assertSink(all)
		f.assertNoDuplicates()
	case 1:
		t.Logf("the worker was killed running tasks %v; the run failed: %s", killed, lastLine(r.stderr))
		if after := f.bookmark(); string(after.Version) != string(before.Version) {
			t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
		}
		if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
			t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
		}
		s := f.mustRun()
		assertFiles(t, "the run after the failed one", s, 6)
		f.assertSink(all)
		f.assertNoDuplicates()
	default:
		t.Fatalf("run with a worker killed: got exit %d, want 0 (every row once) or 1 (a clean failure)\n%v", r.code, r)
	}
	// Nothing is read again later.
	assertFiles(t, "the next run", f.mustRun(), 0)
	f.assertSink(all)
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
