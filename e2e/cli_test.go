package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// runFailure is what run --json prints on a failed exit.
type runFailure struct {
	Job       string         `json:"job"`
	RunID     *string        `json:"run_id"`
	Status    string         `json:"status"`
	ExitCode  *int           `json:"exit_code"`
	Error     string         `json:"error"`
	ErrorKind string         `json:"error_kind"`
	Sources   map[string]any `json:"sources"`
	Holder    *struct {
		RunID   string `json:"run_id"`
		Host    string `json:"host"`
		PID     int    `json:"pid"`
		Started string `json:"started"`
	} `json:"holder"`
}

// assertFailureJSON checks that run --json printed exactly one object that
// says the run failed, with the exit code, an error and its kind.
func assertFailureJSON(t testing.TB, r result, code int, kind string) runFailure {
	t.Helper()
	if strings.TrimSpace(r.stdout) == "" {
		t.Errorf("run --json printed nothing on exit %d\n%v", r.code, r)
		return runFailure{}
	}
	v := decodeOne[runFailure](t, r)
	if v.Status != "failed" {
		t.Errorf("run --json: status = %q, want failed\n%v", v.Status, r)
	}
	if v.ExitCode == nil || *v.ExitCode != code {
		t.Errorf("run --json: exit_code = %v, want %d\n%v", v.ExitCode, code, r)
	}
	if v.Error == "" {
		t.Errorf("run --json: no error\n%v", r)
	}
	if v.ErrorKind != kind {
		t.Errorf("run --json: error_kind = %q, want %q\n%v", v.ErrorKind, kind, r)
	}
	if v.RunID == nil || v.Sources == nil {
		t.Errorf("run --json: the failure object lacks the summary's run_id or sources\n%v", r)
	}
	return v
}

// TestRunJSONOnEveryExit: run --json prints one object on exits 1 and 2
// too, saying failed with exit_code, error and error_kind (exit 3 is in
// TestConcurrentRunsLease).
func TestRunJSONOnEveryExit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)

	// A job-file error.
	bad := filepath.Join(f.dir, "bad.yaml")
	writeFile(t, bad, []byte("job: sales\nsourcez: []\n"))
	r := f.tidemark(nil, "run", bad, "--json")
	if r.code != 2 {
		t.Fatalf("run of a bad job file: got exit %d, want 2\n%v", r.code, r)
	}
	assertFailureJSON(t, r, 2, "job_file")

	// A usage error.
	r = f.tidemark(nil, "run", f.jobPath, "--json", "--job-bookmark-option", "pause", "--job-bookmark-from", "x")
	if r.code != 2 {
		t.Fatalf("run with --job-bookmark-from alone: got exit %d, want 2\n%v", r.code, r)
	}
	if v := assertFailureJSON(t, r, 2, "usage"); v.Job != "sales" {
		t.Errorf("run --json: job = %q, want sales\n%v", v.Job, r)
	}

	// A failed run.
	f.mustRun()
	f.badCSV("bad.csv")
	_, r = f.runExpect(1)
	v := assertFailureJSON(t, r, 1, "input")
	if v.RunID == nil || *v.RunID == "" {
		t.Errorf("run --json of a run that failed: no run_id\n%v", r)
	}
	if !strings.Contains(v.Error, "bad.csv") {
		t.Errorf("run --json: error %q does not name bad.csv", v.Error)
	}
}

// TestUsageErrorsAreNoRuns: a --job-bookmark-from/--job-bookmark-to that
// names no run, or one without the other, exits 2 before a run is
// recorded: the history is unchanged and the next run is attempt 1.
func TestUsageErrorsAreNoRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	first := f.mustRun()
	for _, flags := range [][]string{
		{"--job-bookmark-option", "pause", "--job-bookmark-from", "nosuch", "--job-bookmark-to", first.RunID},
		{"--job-bookmark-option", "pause", "--job-bookmark-from", first.RunID, "--job-bookmark-to", "nosuch"},
		{"--job-bookmark-option", "pause", "--job-bookmark-from", first.RunID},
	} {
		_, r := f.runExpect(2, flags...)
		assertFailureJSON(t, r, 2, "usage")
	}
	runs := f.tidemark(nil, "runs", f.jobPath, "--json")
	if runs.code != 0 {
		t.Fatalf("runs: got exit %d\n%v", runs.code, runs)
	}
	if got := decodeOne[[]runSummary](t, runs); len(got) != 1 {
		t.Errorf("runs after three usage errors: %d runs, want the 1 real run\n%v", len(got), runs)
	}
	f.addCSVs("b", 1, 10)
	if s := f.mustRun(); s.Attempt != 1 {
		t.Errorf("the run after usage errors: attempt %d, want 1 (usage errors are no failed runs)", s.Attempt)
	}
}

// TestNoStateIsAnError: runs, bookmark show and bookmark reset of a job
// without state exit 2, say where they looked for the state and why
// there, and create nothing; so does a job the state store does not hold.
// plan of a job that never ran plans its first run, creating nothing.
func TestNoStateIsAnError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	cwdState := filepath.Join(f.cwd, ".tidemark")
	jobState := filepath.Join(f.dir, ".tidemark")

	for _, args := range [][]string{
		{"runs", "sales"},
		{"bookmark", "show", "sales"},
		{"bookmark", "reset", "sales"},
		{"runs", f.jobPath},
		{"bookmark", "reset", f.jobPath},
	} {
		r := f.tidemark(nil, args...)
		if r.code != 2 {
			t.Errorf("%s without state: got exit %d, want 2\n%v", strings.Join(args, " "), r.code, r)
		}
		assertMentions(t, r, ".tidemark/state.db", "TIDEMARK_STATE", "does not exist")
		if strings.Contains(r.output(), "bookmark cleared") {
			t.Errorf("%s without state reports success\n%v", strings.Join(args, " "), r)
		}
	}
	r := f.tidemark([]string{"TIDEMARK_STATE=" + filepath.Join(f.dir, "env", "state.db")}, "runs", "sales")
	if r.code != 2 {
		t.Errorf("runs with $TIDEMARK_STATE missing: got exit %d, want 2\n%v", r.code, r)
	}
	assertMentions(t, r, filepath.Join(f.dir, "env", "state.db"), "$TIDEMARK_STATE")

	p := f.tidemark(nil, "plan", f.jobPath, "--json")
	if p.code != 0 {
		t.Fatalf("plan of a job that never ran: got exit %d, want 0\n%v", p.code, p)
	}
	if got := decodeOne[planView](t, p).Sources["orders_source"].Files; got == nil || *got != 2 {
		t.Errorf("plan of a job that never ran: files %v, want 2\n%v", got, p)
	}
	for _, d := range []string{cwdState, jobState, filepath.Join(f.dir, "env")} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s was created by commands that only read state", d)
		}
	}

	// A state store that exists but holds nothing of the job.
	f.mustRun()
	for _, args := range [][]string{
		{"runs", "salez", "--state", filepath.Join(jobState, "state.db")},
		{"bookmark", "reset", "salez", "--state", filepath.Join(jobState, "state.db")},
	} {
		r := f.tidemark(nil, args...)
		if r.code != 2 {
			t.Errorf("%s: got exit %d, want 2\n%v", strings.Join(args, " "), r.code, r)
		}
		assertMentions(t, r, `"salez"`, "--state", "sales")
	}
	if s := f.bookmark(); string(s.Version) != "1" {
		t.Errorf("bookmark of sales after a reset of another name: version %s, want 1", s.Version)
	}
}

// TestJSONLogsEveryLine: with --log-format json every line on stderr is a
// JSON object, on success and on each failed exit, and "run finished"
// carries the error of a failed run.
func TestJSONLogsEveryLine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	check := func(r result, wantErr string) {
		t.Helper()
		finished := false
		for _, line := range strings.Split(strings.TrimRight(r.stderr, "\n"), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("stderr line is not JSON: %q\n%v", line, r)
				continue
			}
			if m["msg"] == "run finished" {
				finished = true
				e, _ := m["error"].(string)
				if wantErr != "" && !strings.Contains(e, wantErr) {
					t.Errorf("run finished: error %q, want one mentioning %q\n%v", e, wantErr, r)
				}
				if wantErr == "" && e != "" {
					t.Errorf("run finished of a run that succeeded has an error %q", e)
				}
			}
		}
		if !finished {
			t.Errorf("no \"run finished\" line\n%v", r)
		}
	}
	check(f.tidemark(nil, "run", f.jobPath, "--log-format", "json"), "")
	f.badCSV("bad.csv")
	r := f.tidemark(nil, "run", f.jobPath, "--log-format", "json")
	if r.code != 1 {
		t.Fatalf("run of bad input: got exit %d, want 1\n%v", r.code, r)
	}
	check(r, "bad.csv")
	r = f.tidemark(nil, "run", f.jobPath, "--log-format", "json", "--job-bookmark-from", "x")
	if r.code != 2 {
		t.Fatalf("run with a usage error: got exit %d, want 2\n%v", r.code, r)
	}
	check(r, "--job-bookmark-to")
	r = f.tidemark(nil, "runs", "nosuch", "--log-format", "json")
	if r.code != 2 || !bytes.HasPrefix([]byte(r.stderr), []byte("{")) || strings.Contains(r.stderr, "\ntidemark:") {
		t.Errorf("runs of an unknown job with --log-format json: want exit 2 and JSON lines only\n%v", r)
	}
}

// TestRunsExplainsMarks: runs marks a run undone by a reset and says what
// the mark means.
func TestRunsExplainsMarks(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	first := f.mustRun()
	f.addCSVs("b", 1, 10)
	f.mustRun()
	f.reset("--to-run", first.RunID)
	r := f.tidemark(nil, "runs", f.jobPath)
	if r.code != 0 {
		t.Fatalf("runs: exit %d\n%v", r.code, r)
	}
	if !strings.Contains(r.stdout, "succeeded*") {
		t.Fatalf("runs does not mark the undone run\n%v", r)
	}
	var legend bool
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "*") && strings.Contains(l, "undone") && strings.Contains(l, "bookmark reset") {
			legend = true
		}
	}
	if !legend {
		t.Errorf("runs marks a run with * and does not say what * means\n%v", r)
	}
}

// TestSQLReportsRowsAndKeys: a SQL table source is reported by its rows
// and the key range read, not as "1 files", in the run summary, in runs
// and in plan; run --json carries the range too.
func TestSQLReportsRowsAndKeys(t *testing.T) {
	t.Parallel()
	eachSQL(t, []sqldb.Kind{sqldb.SQLite, sqldb.Postgres}, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 10)...)
		f.writeJob(sqlJob{})
		r := f.tidemark(nil, "run", f.jobPath)
		if r.code != 0 {
			t.Fatalf("run: exit %d\n%v", r.code, r)
		}
		if !strings.Contains(r.stderr, "source orders_db: SQL table, 10 rows, keys from the start up to (10)") {
			t.Errorf("run summary does not report the table's 10 rows and keys up to 10\n%v", r)
		}
		f.insertOrders(idRange(11, 17)...)
		p := f.tidemark(nil, "plan", f.jobPath)
		if p.code != 0 || !strings.Contains(p.stdout, "source orders_db (SQL table): 7 rows to read, keys after (10) up to (17)") {
			t.Errorf("plan does not report 7 rows after key 10 up to 17\n%v", p)
		}
		s, jr := f.run(nil)
		if jr.code != 0 {
			t.Fatalf("run --json: exit %d\n%v", jr.code, jr)
		}
		var keys struct {
			Sources map[string]struct {
				Table     bool   `json:"table"`
				KeysAfter string `json:"keys_after"`
				KeysUpTo  string `json:"keys_up_to"`
			} `json:"sources"`
		}
		if err := json.Unmarshal([]byte(jr.stdout), &keys); err != nil {
			t.Fatal(err)
		}
		if k := keys.Sources["orders_db"]; !k.Table || k.KeysAfter != "10" || k.KeysUpTo != "17" {
			t.Errorf("run --json: sources.orders_db table/keys_after/keys_up_to = %v/%q/%q, want true/10/17\n%v", k.Table, k.KeysAfter, k.KeysUpTo, jr)
		}
		runs := f.tidemark(nil, "runs", f.jobPath)
		if runs.code != 0 {
			t.Fatalf("runs: exit %d\n%v", runs.code, runs)
		}
		for _, want := range []string{
			"source orders_db: SQL table, 7 rows, keys after (10) up to (17)",
			"source orders_db: SQL table, 10 rows, keys from the start up to (10)",
		} {
			if !strings.Contains(runs.stdout, want) {
				t.Errorf("runs does not say %q\n%v", want, runs)
			}
		}
		for _, l := range strings.Split(runs.stdout, "\n") {
			if strings.HasPrefix(l, s.RunID) && strings.Fields(l)[4] != "0" {
				t.Errorf("runs counts the table's read as files: %q", l)
			}
		}
	})
}
