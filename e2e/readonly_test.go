package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readOnlyUser runs commands as a user that cannot write the state folder:
// the test's own user after chmod, or, for root (whom permissions do not
// stop), the nobody user. It returns nil when that is impossible here.
func readOnlyUser(t *testing.T, dirs ...string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	cred := &syscall.Credential{Uid: 65534, Gid: 65534}
	probe := exec.Command("true")
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := probe.Run(); err != nil {
		t.Skipf("cannot run a command as uid 65534 to see a read-only folder as root does not: %v", err)
	}
	// The other user must reach the binary, the job and its folders.
	for _, d := range append(dirs, filepath.Dir(tidemarkBin)) {
		for p := d; p != "/" && p != "."; p = filepath.Dir(p) {
			if info, err := os.Stat(p); err == nil && info.Mode().Perm()&0o005 != 0o005 {
				if err := os.Chmod(p, info.Mode().Perm()|0o005); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return cred
}

// tidemarkAs runs the binary in dir as cred (nil: as the test's user).
func tidemarkAs(t *testing.T, cred *syscall.Credential, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, env, args...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	start := time.Now()
	err := cmd.Run()
	return finish(t, ctx, args, start, err, stdout, stderr)
}

// TestReadOnlyState: with the state folder read-only, runs, bookmark show
// and plan work (they open the state read-only and write nothing), also
// while a run of another job writes the same state file; run fails saying
// the state is read-only and naming its path, and records nothing.
func TestReadOnlyState(t *testing.T) {
	t.Parallel()
	f := newFixture(t, jobOpts{})
	f.addCSVs("a", 2, 10)
	first := f.mustRun()
	f.addCSVs("b", 1, 10)
	stateDir := filepath.Join(f.dir, ".tidemark")
	cred := readOnlyUser(t, f.dir, f.cwd)
	if err := os.Chmod(stateDir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(stateDir, 0o755) })
	as := func(args ...string) result {
		t.Helper()
		r := tidemarkAs(t, cred, f.cwd, f.environ(nil), args...)
		f.check(r)
		return r
	}
	readCommands := func(what string) {
		t.Helper()
		r := as("runs", f.jobPath, "--json")
		if r.code != 0 {
			t.Fatalf("runs %s: got exit %d, want 0\n%v", what, r.code, r)
		}
		if runs := decodeOne[[]runSummary](t, r); len(runs) != 1 || runs[0].RunID != first.RunID {
			t.Errorf("runs %s: got %+v, want the one run %s", what, runs, first.RunID)
		}
		r = as("bookmark", "show", f.jobPath, "--json")
		if r.code != 0 {
			t.Fatalf("bookmark show %s: got exit %d, want 0\n%v", what, r.code, r)
		}
		if v := decodeOne[bookmarkView](t, r); v.RunID != first.RunID {
			t.Errorf("bookmark show %s: run_id %q, want %s", what, v.RunID, first.RunID)
		}
		r = as("plan", f.jobPath, "--json")
		if r.code != 0 {
			t.Fatalf("plan %s: got exit %d, want 0\n%v", what, r.code, r)
		}
		if files := decodeOne[planView](t, r).Sources["orders_source"].Files; files == nil || *files != 1 {
			t.Errorf("plan %s: files %v, want the 1 new file", what, files)
		}
	}
	readCommands("with a read-only state folder")

	r := as("run", f.jobPath)
	if r.code != 1 {
		t.Fatalf("run with a read-only state folder: got exit %d, want 1\n%v", r.code, r)
	}
	assertMentions(t, r, "read-only", filepath.Join(stateDir, "state.db"))
	if strings.Contains(r.stderr, "unable to open database file") && !strings.Contains(r.stderr, "read-only") {
		t.Errorf("run with a read-only state folder: SQLite's message alone\n%v", r)
	}

	// A writer active at the same time: a slow run of another job in the
	// same state file (as the owner of the folder), its -wal and -shm in
	// place; the read-only reader sees the committed state and the run.
	other := filepath.Join(f.dir, "other.yaml")
	o := jobOpts{name: "other", transform: slowTransform}
	writeFile(t, other, []byte(o.yaml(f.in.loc(), filepath.Join(f.dir, "output2")))) // the same default state
	if err := os.Chmod(stateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writer := f.start(nil, "run", other)
	writer.waitFor(t, "planned", time.Minute)
	if err := os.Chmod(stateDir, 0o555); err != nil {
		t.Fatal(err)
	}
	readCommands("while another job's run writes the state")
	r = as("runs", "other", "--state", filepath.Join(stateDir, "state.db"), "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"job":"other"`) {
		t.Errorf("runs of the job being run, read-only: want exit 0 and its run\n%v", r)
	}
	if w := writer.wait(t); w.code != 0 {
		t.Errorf("the writer: got exit %d, want 0\n%v", w.code, w)
	}
	readCommands("after the writer finished")

	// A read-only state file in a writable folder: SQLite would open it
	// read-only without a word; run refuses at once, writing nothing.
	dbFile := filepath.Join(stateDir, "state.db")
	if err := os.Chmod(stateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dbFile, 0o444); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dbFile, 0o644) })
	r = as("run", f.jobPath, "--json")
	if r.code != 1 {
		t.Fatalf("run with a read-only state file: got exit %d, want 1\n%v", r.code, r)
	}
	assertMentions(t, r, "read-only", dbFile)
	assertFailureJSON(t, r, 1, "state")
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(dbFile + suffix); err == nil {
			t.Errorf("run with a read-only state file left %s%s", dbFile, suffix)
		}
	}
	readCommands("with a read-only state file")
}
