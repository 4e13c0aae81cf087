package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sparktest"
	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// onSpark is the local backend with the job on `engine: spark`, on the
// test run's shared Spark Connect server (scripts/test.sh starts it).
const onSpark backend = "spark"

// onSparkS3 is the S3 backend (versitygw) with the job on `engine: spark`:
// Spark reads the sources through s3a.
const onSparkS3 backend = "spark-s3"

// sparkEngine is the engine line of a job on the shared server.
func sparkEngine(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("engine: {spark: {remote: %q}}", sparktest.Remote(t))
}

// The end-to-end bodies the other backends run, on Spark.
func TestSparkThreeDays(t *testing.T)         { t.Parallel(); testThreeDays(t, onSpark) }
func TestSparkModifiedFile(t *testing.T)      { t.Parallel(); testModifiedFile(t, onSpark) }
func TestSparkPauseFromTo(t *testing.T)       { t.Parallel(); testPauseFromTo(t, onSpark) }
func TestSparkRewind(t *testing.T)            { t.Parallel(); testRewind(t, onSpark) }
func TestSparkPurgeOutput(t *testing.T)       { t.Parallel(); testPurgeOutput(t, onSpark) }
func TestSparkFaultAtEachStep(t *testing.T)   { t.Parallel(); testFaultAtEachStep(t, onSpark) }
func TestSparkMalformedCSVRow(t *testing.T)   { t.Parallel(); testMalformedCSVRow(t, onSpark) }
func TestSparkBadRecordPolicies(t *testing.T) { t.Parallel(); testBadRecordPolicies(t, onSpark) }
func TestSparkHiveFolders(t *testing.T)       { t.Parallel(); testHiveFoldersAndIgnoredFiles(t, onSpark) }
func TestSparkThreeDaysS3(t *testing.T)       { t.Parallel(); testThreeDays(t, onSparkS3) }
func TestSparkBadRecordPoliciesS3(t *testing.T) {
	t.Parallel()
	testBadRecordPolicies(t, onSparkS3)
}

// TestSparkEngineUnreachable: a job on a Spark Connect server that does
// not answer fails at once (exit 1), naming the address; nothing is
// published and the bookmark does not move.
func TestSparkEngineUnreachable(t *testing.T) {
	t.Parallel()
	sparktest.Remote(t)
	for _, tc := range []struct{ name, engine string }{
		{"with options", `engine: {spark: {remote: "sc://127.0.0.1:9"}}`},
		{"as a block", "engine:\n  spark:\n    remote: sc://127.0.0.1:9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, jobOpts{top: []string{tc.engine}})
			f.addCSVs("a", 2, 10)
			start := time.Now()
			s, r := f.runExpect(1)
			if d := time.Since(start); d > 40*time.Second {
				t.Errorf("an unreachable server took %v to fail, want it at once", d)
			}
			if !strings.Contains(r.stderr, "127.0.0.1:9") {
				t.Errorf("got stderr %q, want it to name the address 127.0.0.1:9", r.stderr)
			}
			if s.Status != "failed" {
				t.Errorf("run --json: status = %q, want failed", s.Status)
			}
			if files := f.sinkFiles(); len(files) > 0 {
				t.Errorf("a failed run published %d files", len(files))
			}
		})
	}
}

// TestSparkRemoteFromEnvironment: `engine: spark` with no remote takes
// SPARK_REMOTE, as pyspark does; without either it is a clear error.
func TestSparkRemoteFromEnvironment(t *testing.T) {
	t.Parallel()
	remote := sparktest.Remote(t)
	f := newFixture(t, jobOpts{top: []string{"engine: spark"}})
	recs := f.addCSVs("a", 2, 10)
	s, r := f.run([]string{"SPARK_REMOTE=" + remote})
	if r.code != 0 {
		t.Fatalf("run with SPARK_REMOTE: got exit %d, want 0\n%v", r.code, r)
	}
	assertFiles(t, "run", s, 2)
	f.assertSink(recs)

	g := newFixture(t, jobOpts{top: []string{"engine: spark"}})
	g.addCSVs("a", 1, 10)
	_, r = g.run([]string{"SPARK_REMOTE="})
	if r.code == 0 || !regexp.MustCompile(`SPARK_REMOTE`).MatchString(r.stderr) {
		t.Errorf("run without a remote: got exit %d, stderr %q; want a failure naming SPARK_REMOTE", r.code, r.stderr)
	}
}

// TestSparkServerKilledMidRun: the Spark server dies while a run reads;
// the run fails naming the server, publishes nothing and keeps the
// bookmark; once the server is back the retried run publishes every row
// exactly once. A private server: the shared one is never killed. The
// server comes back on another port, the job file edited to name it: the
// port the killed one freed may be taken meanwhile by another test's
// server (in CI once, an HTTP server that answered the retried run).
func TestSparkServerKilledMidRun(t *testing.T) {
	t.Parallel()
	srv := sparktest.Start(t)
	f := newFixture(t, jobOpts{top: []string{fmt.Sprintf("engine: {spark: {remote: %q}}", srv.Remote)}})
	monday := f.addCSVs("monday", 2, 20)
	f.mustRun()
	before := f.bookmark()
	filesBefore := relFiles(t, f.outDir())
	tuesday := f.addCSVs("tuesday", 2, 20)

	// The run pauses at mid-read (its sources opened on the server) while
	// the server is killed; a SIGKILL takes well under the pause.
	p := f.start([]string{"TIDEMARK_FAULT=mid-read:sleep=15s"}, "run", f.jobPath, "--json")
	p.waitFor(t, "fault: paused at mid-read", 3*time.Minute)
	srv.Kill()
	r := p.wait(t)
	if r.code != 1 {
		t.Fatalf("run with its server killed: got exit %d, want 1\n%v", r.code, r)
	}
	if !strings.Contains(r.stderr, "127.0.0.1:"+fmt.Sprint(srv.Port)) {
		t.Errorf("got stderr %q, want it to name the server", r.stderr)
	}
	if after := f.bookmark(); string(after.Version) != string(before.Version) {
		t.Errorf("bookmark moved by a failed run: version %s -> %s", before.Version, after.Version)
	}
	if got := relFiles(t, f.outDir()); strings.Join(got, "\n") != strings.Join(filesBefore, "\n") {
		t.Errorf("a failed run published files: before %d, after %d", len(filesBefore), len(got))
	}

	back := sparktest.Start(t)
	job, err := os.ReadFile(f.jobPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.jobPath, []byte(strings.ReplaceAll(string(job), srv.Remote, back.Remote)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := f.mustRun()
	assertFiles(t, "retried run", s, 2)
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()
}

// TestSparkQueryTimeout: a statement longer than query_timeout fails the
// run, saying so; nothing is published.
func TestSparkQueryTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{top: []string{fmt.Sprintf("engine: {spark: {remote: %q, query_timeout: 1ms}}", sparktest.Remote(t))}})
	f.addCSVs("a", 2, 10)
	_, r := f.runExpect(1)
	if !strings.Contains(r.stderr, "query_timeout 1ms exceeded") {
		t.Errorf("got stderr %q, want it to say query_timeout 1ms was exceeded", r.stderr)
	}
	if files := f.sinkFiles(); len(files) > 0 {
		t.Errorf("a timed out run published %d files", len(files))
	}
}

// TestSparkSQLTableSource: a SQL table source on Spark. The engine reads
// no pipes, so the runner extracts each run's key range to files in the
// run's temporary folder, which Spark reads (a local server; a remote
// cluster needs engine.spark.staging on storage it can read). Inserts
// across runs arrive once each.
func TestSparkSQLTableSource(t *testing.T) {
	t.Parallel()
	f := newSQLFixture(t, sqldb.SQLite)
	f.createOrders()
	f.insertOrders(idRange(1, 50)...)
	rel, err := filepath.Rel(f.dir, f.db.Name)
	if err != nil {
		t.Fatal(err)
	}
	f.conn = "sqlite:" + rel
	f.writeJob(sqlJob{top: []string{sparkEngine(t)}})
	s1 := f.mustRun()
	assertIDSet(t, "files of run 1", f.fileIDsOfRun(s1.RunID), idRange(1, 50))
	f.insertOrders(idRange(51, 80)...)
	s2 := f.mustRun()
	assertIDSet(t, "files of run 2", f.fileIDsOfRun(s2.RunID), idRange(51, 80))
	if got := s2.src().Rows; got != 30 {
		t.Errorf("run 2 summary: sources.orders_db.rows = %d, want 30", got)
	}
	f.mustRun()
	assertIDSet(t, "files after run 3", f.fileIDs(), idRange(1, 80))
	want := [][]string{{"1", "v1", "10"}, {"80", "v80", "800"}}
	if got := f.fileRows("CAST(id AS VARCHAR), v, CAST(amount AS VARCHAR)"); !sameRows(rowsWithKey(got, "1", "80"), want) {
		t.Errorf("file rows: ids 1 and 80 are %v, want %v", rowsWithKey(got, "1", "80"), want)
	}
}

// TestSparkUseSSL: `use_ssl=true` in the remote means TLS, as in pyspark.
// The Go client sent it as a header and connected in plain text (TLS only
// with a token), so a job asking for TLS ran unencrypted; against the
// tests' plain-text server it now fails to connect, naming the server.
func TestSparkUseSSL(t *testing.T) {
	t.Parallel()
	remote := sparktest.Remote(t)
	f := newFixture(t, jobOpts{top: []string{fmt.Sprintf("engine: {spark: {remote: %q}}", remote+"/;use_ssl=true")}})
	f.addCSVs("a", 1, 5)
	_, r := f.runExpect(1)
	if !strings.Contains(r.stderr, strings.TrimPrefix(remote, "sc://")) || !strings.Contains(r.stderr, "tls") {
		t.Errorf("got stderr %q, want a TLS failure naming the server", r.stderr)
	}
	if files := f.sinkFiles(); len(files) > 0 {
		t.Errorf("a run that could not connect published %d files", len(files))
	}
}
