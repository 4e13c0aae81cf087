package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/sqldb"
)

// TestRunJSONOnCommandLineErrors: run --json prints its one failure object
// on a command-line error too (an unknown flag, a missing job file
// argument), and --log-format json makes that error a JSON line, even when
// the flags come after the bad one.
func TestRunJSONOnCommandLineErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	for _, args := range [][]string{
		{"run", f.jobPath, "--bogus", "--json"},
		{"run", "--json"},
		{"run", "--bogus", f.jobPath, "--log-format", "json", "--json"},
	} {
		r := f.tidemark(nil, args...)
		if r.code != 2 {
			t.Errorf("tidemark %s: got exit %d, want 2\n%v", strings.Join(args, " "), r.code, r)
		}
		assertFailureJSON(t, r, 2, "usage")
	}
	r := f.tidemark(nil, "run", f.jobPath, "--bogus", "--log-format=json")
	for _, line := range strings.Split(strings.TrimRight(r.stderr, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("--log-format json after an unknown flag: stderr line is not JSON: %q\n%v", line, r)
		}
	}
}

// TestPlanWarnsOfAJobWithoutState: plan of a job that never ran warns that
// there is no state yet also when the state store exists and holds other
// jobs only (a typo in the job name looks like a first run otherwise).
func TestPlanWarnsOfAJobWithoutState(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	f.mustRun()
	r := f.tidemark(nil, "plan", f.jobPath, "--JOB_NAME", "salez")
	if r.code != 0 {
		t.Fatalf("plan of a job that never ran: got exit %d, want 0\n%v", r.code, r)
	}
	if !strings.Contains(r.stderr, "no state yet") || !strings.Contains(r.stderr, "salez") {
		t.Errorf("plan of a job the state store holds nothing of: no warning naming it\n%v", r)
	}
	r = f.tidemark(nil, "plan", f.jobPath)
	if strings.Contains(r.stderr, "no state yet") {
		t.Errorf("plan of a job that ran warns of no state\n%v", r)
	}
}

// TestStateIsAFolder: run --state naming a folder says it is a folder, not
// that the state is read-only.
func TestStateIsAFolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 1, 10)
	dir := t.TempDir()
	_, r := f.runExpect(1, "--state", dir)
	v := assertFailureJSON(t, r, 1, "state")
	if !strings.Contains(v.Error, "it is a folder") || strings.Contains(v.Error, "read-only") {
		t.Errorf("run --state FOLDER: error %q, want one saying it is a folder (and not read-only)\n%v", v.Error, r)
	}
}

// TestUnsetPasswordEnvIsNoRun: a password_env naming a variable that is
// not set is a usage error found before the run is recorded: exit 2 naming
// the variable, no run in runs, attempt unchanged.
func TestUnsetPasswordEnvIsNoRun(t *testing.T) {
	t.Parallel()
	eachSQL(t, []sqldb.Kind{sqldb.Postgres}, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 5)...)
		f.writeJob(sqlJob{table: "orders_out"})
		f.mustRun()
		var env []string
		for _, kv := range f.env {
			if !strings.HasPrefix(kv, sqlPasswordEnv+"=") {
				env = append(env, kv)
			}
		}
		r := tidemark(t, f.cwd, env, "run", f.jobPath, "--json")
		f.check(r)
		if r.code != 2 {
			t.Errorf("run with %s unset: got exit %d, want 2\n%v", sqlPasswordEnv, r.code, r)
		}
		if v := assertFailureJSON(t, r, 2, "usage"); !strings.Contains(v.Error, sqlPasswordEnv) {
			t.Errorf("run with %s unset: error %q does not name it", sqlPasswordEnv, v.Error)
		}
		runs := f.tidemark(nil, "runs", f.jobPath, "--json")
		var list []map[string]any
		if err := json.Unmarshal([]byte(runs.stdout), &list); err != nil || len(list) != 1 {
			t.Errorf("runs after a run with the password variable unset: want the one run before it, got %d (%v)\n%v", len(list), err, runs)
		}
		f.insertOrders(idRange(6, 8)...)
		s, r := f.run(nil)
		if r.code != 0 || s.src().Rows != 3 {
			t.Errorf("the next run: exit %d, %d rows, want 0 and 3\n%v", r.code, s.src().Rows, r)
		}
		if !strings.Contains(r.stdout, `"attempt":1`) {
			t.Errorf("the next run is not attempt 1\n%v", r)
		}
	})
}

// TestPlanSaysRegressionCheckOff: with regression_check: false plan does
// not claim "0 regressions": it says the check is off.
func TestPlanSaysRegressionCheckOff(t *testing.T) {
	t.Parallel()
	eachSQL(t, []sqldb.Kind{sqldb.Postgres}, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 5)...)
		f.writeJob(sqlJob{src: sqlSrc{extra: []string{"regression_check: false"}}})
		f.mustRun()
		f.insertOrders(idRange(6, 8)...)
		r := f.tidemark(nil, "plan", f.jobPath)
		if r.code != 0 {
			t.Fatalf("plan: got exit %d, want 0\n%v", r.code, r)
		}
		if strings.Contains(r.stdout, "0 regressions") || !strings.Contains(r.stdout, "regression check off") {
			t.Errorf("plan with regression_check: false: want it to say the check is off, not 0 regressions\n%v", r)
		}
		if !strings.Contains(r.stdout, "3 rows to read") {
			t.Errorf("plan: want 3 rows to read\n%v", r)
		}
	})
}

// TestBookmarkShowSQLRows: bookmark show --json of a SQL table source says
// the rows read and the runs that read them under those names (its
// "files" and "bytes" hold runs and rows).
func TestBookmarkShowSQLRows(t *testing.T) {
	t.Parallel()
	eachSQL(t, []sqldb.Kind{sqldb.Postgres}, func(t *testing.T, f *sqlFixture) {
		f.createOrders()
		f.insertOrders(idRange(1, 5)...)
		f.writeJob(sqlJob{})
		f.mustRun()
		f.insertOrders(idRange(6, 8)...)
		f.mustRun()
		r := f.tidemark(nil, "bookmark", "show", f.jobPath, "--json")
		var v struct {
			Sources map[string]struct {
				Rows *int64 `json:"rows"`
				Runs *int64 `json:"runs"`
			} `json:"sources"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("bookmark show --json: %v\n%v", err, r)
		}
		s := v.Sources["orders_db"]
		if s.Rows == nil || *s.Rows != 8 || s.Runs == nil || *s.Runs != 2 {
			t.Errorf("bookmark show --json of a SQL source: rows %v, runs %v, want 8 and 2\n%v", s.Rows, s.Runs, r)
		}
	})
}

// TestJobNameShadowedByAFile: runs, bookmark show and bookmark reset of a
// job name work when a file of that name (not a job file) lies in the
// working folder; a broken job file of a name no job has is still its
// error.
func TestJobNameShadowedByAFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	f.mustRun()
	state := filepath.Join(f.dir, ".tidemark", "state.db")
	writeFile(t, filepath.Join(f.cwd, "sales"), []byte("a log line\n"))
	for _, args := range [][]string{
		{"runs", "sales", "--state", state, "--json"},
		{"bookmark", "show", "sales", "--state", state, "--json"},
	} {
		r := f.tidemark(nil, args...)
		if r.code != 0 || !strings.HasPrefix(strings.TrimSpace(r.stdout), "[") && !strings.Contains(r.stdout, `"sales"`) {
			t.Errorf("%s with a file named sales in the working folder: got exit %d, want 0 and the job's state\n%v",
				strings.Join(args, " "), r.code, r)
		}
	}
	writeFile(t, filepath.Join(f.cwd, "other"), []byte("job: [\n"))
	r := f.tidemark(nil, "runs", "other", "--state", state)
	if r.code != 2 || !strings.Contains(r.stderr, "other:1") {
		t.Errorf("runs of a broken job file: got exit %d, want 2 naming the file and line\n%v", r.code, r)
	}
}

// TestInterruptedRunSaysSo: a run stopped by SIGINT or SIGTERM prints its
// one run --json object, exit 1, error_kind interrupted, and its error
// names the signal (not only "context canceled"), in runs too.
func TestInterruptedRunSaysSo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		p := f.start([]string{"TIDEMARK_FAULT=after-plan:sleep=1s"}, "run", f.jobPath, "--json")
		p.waitFor(t, "fault: paused at after-plan", 30*time.Second)
		if err := p.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		r := p.wait(t)
		v := assertFailureJSON(t, r, 1, "interrupted")
		if !strings.Contains(v.Error, "interrupted by "+map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig]) {
			t.Errorf("run stopped by %v: error %q does not say so\n%v", sig, v.Error, r)
		}
	}
	runs := f.tidemark(nil, "runs", f.jobPath)
	if !strings.Contains(runs.stdout, "interrupted by SIGINT") {
		t.Errorf("runs does not say the run was interrupted\n%v", runs)
	}
	s := f.mustRun()
	assertFiles(t, "the run after two interrupted ones", s, 2)
}
