package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestThreeDays is the quickstart's story: Monday 10 files arrive and are
// read, Tuesday 5 new ones and only they are read, Wednesday nothing new.
func TestThreeDays(t *testing.T) {
	t.Parallel()
	eachBackend(t, testThreeDays)
}

func testThreeDays(t *testing.T, be backend) {
	f := newFixtureOn(t, be, jobOpts{})

	monday := f.addCSVs("monday", 10, 40)
	if got := f.planFiles(); got != 10 {
		t.Errorf("plan before Monday's run: files = %d, want 10", got)
	}
	mon := f.mustRun()
	assertFiles(t, "Monday", mon, 10)
	if got, want := mon.source().Rows, int64(len(monday)); got != want {
		t.Errorf("Monday: sources.orders_source.rows = %d, want %d", got, want)
	}
	if mon.source().Bytes <= 0 {
		t.Errorf("Monday: sources.orders_source.bytes = %d, want > 0", mon.source().Bytes)
	}
	if got, want := mon.sinkRows(), int64(len(monday)); got != want {
		t.Errorf("Monday: sinks.orders_sink.rows = %d, want %d", got, want)
	}
	if mon.Job != "sales" || mon.RunID == "" || !strings.Contains(mon.Mode, "enable") {
		t.Errorf("Monday: job, run_id, mode = %q, %q, %q; want sales, an id, enable", mon.Job, mon.RunID, mon.Mode)
	}
	f.assertSink(monday)
	assertRecords(t, "Monday's run output", f.sinkRun(mon.RunID), monday)
	bm1 := f.bookmark()

	tuesday := f.addCSVs("tuesday", 5, 30)
	if got := f.planFiles(); got != 5 {
		t.Errorf("plan before Tuesday's run: files = %d, want 5", got)
	}
	tue := f.mustRun()
	assertFiles(t, "Tuesday", tue, 5)
	if got, want := tue.source().Rows, int64(len(tuesday)); got != want {
		t.Errorf("Tuesday: sources.orders_source.rows = %d, want %d", got, want)
	}
	f.assertSink(concat(monday, tuesday))
	assertRecords(t, "Tuesday's run output", f.sinkRun(tue.RunID), tuesday)
	bm2 := f.bookmark()
	if string(bm2.Version) == string(bm1.Version) {
		t.Errorf("bookmark version after Tuesday = %s, same as after Monday", bm2.Version)
	}
	if bm2.RunID != tue.RunID {
		t.Errorf("bookmark run_id after Tuesday = %q, want %q", bm2.RunID, tue.RunID)
	}
	if _, ok := bm2.Sources["orders_source"]; !ok || bm2.Job != "sales" {
		t.Errorf("bookmark show = job %q sources %v, want job sales with orders_source", bm2.Job, keys(bm2.Sources))
	}

	wed := f.mustRun()
	assertFiles(t, "Wednesday", wed, 0)
	if got := wed.sinkRows(); got != 0 {
		t.Errorf("Wednesday: sinks.orders_sink.rows = %d, want 0", got)
	}
	f.assertSink(concat(monday, tuesday))
	f.assertNoDuplicates()
	if got := f.planFiles(); got != 0 {
		t.Errorf("plan after Wednesday's run: files = %d, want 0", got)
	}

	// Every published file belongs to one of the runs.
	ids := map[string]bool{mon.RunID: true, tue.RunID: true, wed.RunID: true}
	for _, file := range f.sinkFiles() {
		if run := runOfFile(t, file); !ids[run] {
			t.Errorf("published file %s names run %q, not one of this job's runs", file, run)
		}
	}

	// runs --json: newest first, with times.
	r := f.tidemark(nil, "runs", f.jobPath, "--json")
	if r.code != 0 {
		t.Fatalf("runs: got exit %d, want 0\n%v", r.code, r)
	}
	runs := decodeOne[[]runSummary](t, r)
	var got []string
	for _, run := range runs {
		got = append(got, run.RunID)
		if _, err := time.Parse(time.RFC3339, run.StartedAt); err != nil {
			t.Errorf("runs: run %s started_at %q is not RFC 3339", run.RunID, run.StartedAt)
		}
		if _, err := time.Parse(time.RFC3339, run.FinishedAt); err != nil {
			t.Errorf("runs: run %s finished_at %q is not RFC 3339", run.RunID, run.FinishedAt)
		}
		if run.Status != "succeeded" {
			t.Errorf("runs: run %s status %q, want succeeded", run.RunID, run.Status)
		}
	}
	want := []string{wed.RunID, tue.RunID, mon.RunID}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("runs --json run_ids = %v, want newest first %v", got, want)
	}
	if len(runs) == 3 && runs[1].source().Files != 5 {
		t.Errorf("runs --json: Tuesday's run files = %d, want 5", runs[1].source().Files)
	}

	if p, ok := f.out.(*s3Place); ok {
		// The read-backs above went through the S3 API; versitygw's own
		// folder must hold the same published files, and DuckDB pointed
		// straight at it must read the same records.
		dir := f.outDir()
		assertSameFiles(t, "published files: S3 listing vs versitygw's folder", sinkFiles(t, dir), dir, sinkFiles(t, p.posixDir()), p.posixDir())
		assertRecords(t, "sink read from versitygw's folder", readSink(t, p.posixDir(), f.sink), concat(monday, tuesday))
	}
}

// assertSameFiles compares two file lists by their paths relative to their
// roots.
func assertSameFiles(t testing.TB, what string, a []string, aRoot string, b []string, bRoot string) {
	t.Helper()
	rel := func(files []string, root string) string {
		var out []string
		for _, f := range files {
			r, err := filepath.Rel(root, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, filepath.ToSlash(r))
		}
		return strings.Join(out, "\n")
	}
	if ra, rb := rel(a, aRoot), rel(b, bRoot); ra != rb {
		t.Errorf("%s differ:\n--- first:\n%s\n--- second:\n%s", what, ra, rb)
	}
}

// TestRunJSONShape checks that run --json prints exactly the contract's keys
// on stdout and the human summary stays on stderr.
func TestRunJSONShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	_, r := f.runExpect(0)
	obj := decodeOne[map[string]json.RawMessage](t, r)
	for _, k := range []string{"job", "run_id", "attempt", "status", "mode", "sources", "sinks", "duration_ms"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("run --json: key %q missing from %s", k, r.stdout)
		}
	}
	var s runSummary
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		t.Fatal(err)
	}
	if s.Attempt < 1 {
		t.Errorf("run --json: attempt = %d, want >= 1", s.Attempt)
	}
	if _, ok := s.Sinks["orders_sink"]; !ok {
		t.Errorf("run --json: sinks has no orders_sink: %s", r.stdout)
	}

	// Without --json, stdout stays empty: human output is on stderr.
	f.addCSVs("b", 1, 10)
	plain := f.tidemark(nil, "run", f.jobPath)
	if plain.code != 0 {
		t.Fatalf("run: got exit %d, want 0\n%v", plain.code, plain)
	}
	if strings.TrimSpace(plain.stdout) != "" {
		t.Errorf("run without --json printed on stdout, want human output on stderr only\n%v", plain)
	}
	if strings.TrimSpace(plain.stderr) == "" {
		t.Errorf("run without --json printed nothing on stderr\n%v", plain)
	}

	// --log-format json: every stderr line is a JSON object.
	f.addCSVs("c", 1, 10)
	lj := f.tidemark(nil, "run", f.jobPath, "--log-format", "json")
	if lj.code != 0 {
		t.Fatalf("run --log-format json: got exit %d, want 0\n%v", lj.code, lj)
	}
	lines := 0
	for _, line := range strings.Split(lj.stderr, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines++
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("run --log-format json: stderr line is not a JSON object: %q", line)
		}
	}
	if lines == 0 {
		t.Errorf("run --log-format json: no log lines on stderr")
	}
}

// TestJobNameFlag checks Glue's --JOB_NAME, which overrides job:.
func TestJobNameFlag(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	s := f.mustRun("--JOB_NAME", "renamed-job")
	if s.Job != "renamed-job" {
		t.Errorf("run --JOB_NAME renamed-job: job = %q, want renamed-job", s.Job)
	}
	r := f.tidemark(nil, "runs", "renamed-job", "--state", f.dir+"/.tidemark/state.db", "--json")
	if r.code != 0 {
		t.Fatalf("runs renamed-job: got exit %d, want 0\n%v", r.code, r)
	}
	if runs := decodeOne[[]runSummary](t, r); len(runs) != 1 || runs[0].RunID != s.RunID {
		t.Errorf("runs renamed-job: got %d runs, want the one run %s\n%s", len(runs), s.RunID, r.stdout)
	}
}

// TestVersion checks that version works and exits 0.
func TestVersion(t *testing.T) {
	t.Parallel()
	r := tidemark(t, t.TempDir(), nil, "version")
	if r.code != 0 || strings.TrimSpace(r.output()) == "" {
		t.Errorf("version: got exit %d and %q, want exit 0 and a version", r.code, r.output())
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
