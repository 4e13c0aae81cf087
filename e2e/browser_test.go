package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// dashboardInput is what e2e/browser/dashboard.py checks the pages
// against: the CLI's own JSON for every job, and the rewind to trigger.
type dashboardInput struct {
	URL       string                     `json:"url"`
	Token     string                     `json:"token"`
	Artifacts string                     `json:"artifacts"`
	Runs      map[string]json.RawMessage `json:"runs"`     // job -> `runs --json`
	Bookmarks map[string]json.RawMessage `json:"bookmark"` // job -> `bookmark show --json`
	Plans     map[string]json.RawMessage `json:"plan"`     // job -> `plan --json`: the backlog
	Job       string                     `json:"job"`      // the job clicked through
	RewindTo  string                     `json:"rewind_to"`
	Undo      []string                   `json:"undo"`   // the runs the rewind undoes
	Delete    []string                   `json:"delete"` // base names of the files it purges
}

// dashboardOutput is what the script saw.
type dashboardOutput struct {
	Screenshots []string        `json:"screenshots"`
	Checked     []string        `json:"checked"`
	Reset       json.RawMessage `json:"reset"` // the reset's answer, as the page got it
}

// TestBrowserDashboard: a real chromium clicks through `tidemark serve`'s
// dashboard over a store filled by real runs (three quickstart runs and a
// failed one of "sales", one with a quarantined row of "returns"): jobs,
// then a job, then a run, checking the numbers shown against `runs --json`;
// then it rewinds "sales" to its first run with purge through the
// confirmation, typing the token. The CLI then sees the rewind, and the
// purged files are gone from the sink.
func TestBrowserDashboard(t *testing.T) {
	t.Parallel()
	b := needBrowser(t)

	sales := newFixture(t, jobOpts{})
	state := filepath.Join(sales.dir, ".tidemark", "state.db")
	sales.addCSVs("monday", 10, 20)
	r1 := sales.mustRun()
	sales.addCSVs("tuesday", 5, 20)
	sales.mustRun()
	assertFiles(t, "wednesday run", sales.mustRun(), 0)
	sales.badCSV("bad.csv")
	if s, _ := sales.runExpect(1); s.Status != "failed" {
		t.Fatalf("run over bad.csv: got status %q, want failed", s.Status)
	}

	returns := newFixture(t, jobOpts{name: "returns", top: []string{fmt.Sprintf("state: %q", state)},
		sourceExtra: []string{"on_bad_record: quarantine"}})
	returns.addCSVs("good", 2, 20)
	returns.badCSV("bad.csv")
	if got := rejected(returns.mustRun()); got != 1 {
		t.Fatalf("returns run: rejected = %d, want 1", got)
	}

	in := dashboardInput{
		Token: randomToken(t), Artifacts: artifactsDir(t), Job: "sales", RewindTo: r1.RunID,
		Runs:      map[string]json.RawMessage{},
		Bookmarks: map[string]json.RawMessage{},
		Plans:     map[string]json.RawMessage{},
	}
	for job, f := range map[string]*fixture{"sales": sales, "returns": returns} {
		in.Runs[job] = json.RawMessage(f.mustTidemark("runs", f.jobPath, "--json").stdout)
		in.Bookmarks[job] = json.RawMessage(f.mustTidemark("bookmark", "show", f.jobPath, "--json").stdout)
		in.Plans[job] = json.RawMessage(f.mustTidemark("plan", f.jobPath, "--json").stdout)
	}
	var runs []runSummary
	if err := json.Unmarshal(in.Runs["sales"], &runs); err != nil {
		t.Fatalf("decoding runs --json: %v", err)
	}
	for _, run := range runs {
		if run.Status == "succeeded" && run.RunID != r1.RunID {
			in.Undo = append(in.Undo, run.RunID)
		}
	}
	kept := map[string]bool{}
	for _, file := range sales.sinkFiles() {
		if runOfFile(t, file) == r1.RunID {
			kept[file] = true
		} else {
			in.Delete = append(in.Delete, filepath.Base(file))
		}
	}
	if len(in.Undo) != 2 || len(in.Delete) == 0 || len(kept) == 0 {
		t.Fatalf("setup: want 2 runs to undo and files of both kinds, got undo %v, delete %v, keep %d", in.Undo, in.Delete, len(kept))
	}

	srv := sales.startServe(state, in.Token)
	in.URL = srv.url
	var out dashboardOutput
	runBrowserScript(t, b, "dashboard.py", in, &out)
	srv.checkQuiet(sales)
	t.Logf("the browser checked %d things (listed above)", len(out.Checked))
	if len(out.Screenshots) < 3 {
		t.Errorf("screenshots: got %v, want one of each page (jobs, job, run)", out.Screenshots)
	}

	// The rewind happened: bookmark back at the first run, the later runs'
	// files gone, the first run's kept, and the next run reads Tuesday again.
	bm := sales.bookmark()
	if bm.RunID != r1.RunID {
		t.Errorf("bookmark show after the rewind: run_id = %s, want %s", bm.RunID, r1.RunID)
	}
	var left []string
	for _, file := range sales.sinkFiles() {
		if !kept[file] {
			left = append(left, filepath.Base(file))
		}
		delete(kept, file)
	}
	if len(left) > 0 {
		t.Errorf("files the rewind should have purged are still in the sink: %v", left)
	}
	if len(kept) > 0 {
		t.Errorf("files of the first run were deleted by the rewind: %v", sortedKeys(kept))
	}
	var after []struct {
		RunID  string `json:"run_id"`
		Undone bool   `json:"undone"`
	}
	if err := json.Unmarshal([]byte(sales.mustTidemark("runs", sales.jobPath, "--json").stdout), &after); err != nil {
		t.Fatalf("decoding runs --json after the rewind: %v", err)
	}
	undo := map[string]bool{}
	for _, id := range in.Undo {
		undo[id] = true
	}
	for _, r := range after {
		if undo[r.RunID] != r.Undone {
			t.Errorf("runs --json after the rewind: run %s undone = %v, want %v", r.RunID, r.Undone, undo[r.RunID])
		}
	}
	if got := sales.planFiles(); got != 6 {
		t.Errorf("plan after the rewind: got %d files, want 6 (Tuesday's 5 and bad.csv)", got)
	}
}

// mustTidemark runs a command that must exit 0.
func (f *fixture) mustTidemark(args ...string) result {
	f.t.Helper()
	r := f.tidemark(nil, args...)
	if r.code != 0 {
		f.t.Fatalf("got exit %d, want 0\n%v", r.code, r)
	}
	return r
}

// sortedKeys is m's keys in order.
func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestBrowserReadTokenAndRebinding: with --read-token a real chromium's
// dashboard says the token is needed, and shows the jobs once it is typed;
// a page under a DNS name rebound to 127.0.0.1 gets 403 for the dashboard
// and for its same-origin fetch of the API, token or not.
func TestBrowserReadTokenAndRebinding(t *testing.T) {
	t.Parallel()
	b := needBrowser(t)
	f := newFixture(t, jobOpts{})
	f.addCSV("a.csv", 5)
	s := f.mustRun()
	state := filepath.Join(f.dir, ".tidemark", "state.db")
	token := randomToken(t)
	f.secrets = append(f.secrets, token)
	addr := loopbackAddr(t)
	p := f.start([]string{"TIDEMARK_SERVE_TOKEN=" + token}, "serve", "--state", state, "--listen", addr,
		"--token-env", "TIDEMARK_SERVE_TOKEN", "--read-token")
	p.waitFor(t, "serving", 30*time.Second)
	defer p.cmd.Process.Kill()
	in := map[string]string{"url": "http://" + addr, "token": token, "job": s.Job, "artifacts": artifactsDir(t)}
	var out struct {
		Checked []string `json:"checked"`
	}
	runBrowserScript(t, b, "readtoken.py", in, &out)
	if len(out.Checked) != 6 {
		t.Errorf("the browser checked %v, want 6 things", out.Checked)
	}
}
