package serve_test

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/serve/view"
	"github.com/tidemark-etl/tidemark/store"
)

// jobsAnswer is GET /api/v1/jobs.
type jobsAnswer struct {
	Jobs []struct {
		Job          string          `json:"job"`
		Version      int64           `json:"version"`
		RunID        string          `json:"run_id"`
		LastRun      *view.Run       `json:"last_run"`
		Backlog      json.RawMessage `json:"backlog"`
		BacklogError string          `json:"backlog_error"`
	} `json:"jobs"`
}

// planAnswer is the part of plan --json the tests read.
type planAnswer struct {
	Job     string `json:"job"`
	Version int64  `json:"version"`
	Sources map[string]struct {
		Files int64    `json:"files"`
		New   []string `json:"new"`
	} `json:"sources"`
}

func TestJobs(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.write("d.csv", 4) // the backlog: one file not read yet
	w.serve(nil)
	var got jobsAnswer
	w.getJSON("/api/v1/jobs", &got)
	if len(got.Jobs) != 1 {
		t.Fatalf("jobs: got %d, want 1", len(got.Jobs))
	}
	j := got.Jobs[0]
	if j.Job != jobName || j.Version != 3 || j.RunID != ids[2] {
		t.Errorf("job: got %q version %d run %s, want %q version 3 run %s", j.Job, j.Version, j.RunID, jobName, ids[2])
	}
	if j.LastRun == nil || j.LastRun.RunID != ids[2] || j.LastRun.Seq != 3 || j.LastRun.Sources["orders"].Rows != 3 {
		t.Errorf("last run: got %+v, want run %s, seq 3, 3 rows", j.LastRun, ids[2])
	}
	if j.BacklogError != "" {
		t.Fatalf("backlog error: got %q, want none", j.BacklogError)
	}
	var plan planAnswer
	if err := json.Unmarshal(j.Backlog, &plan); err != nil {
		t.Fatal(err)
	}
	if got, want := plan.Sources["orders"].Files, int64(1); got != want {
		t.Errorf("backlog files: got %d, want %d", got, want)
	}
}

func TestJob(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.serve(nil)
	var got struct {
		Job      string        `json:"job"`
		Version  int64         `json:"version"`
		Bookmark view.Bookmark `json:"bookmark"`
		LastRun  *view.Run     `json:"last_run"`
		JobFile  string        `json:"job_file"`
	}
	w.getJSON(jobPath(""), &got)
	if got.Job != jobName || got.Version != 3 || got.Bookmark.Sources["orders"].Files != 3 {
		t.Errorf("job: got %+v, want version 3 with 3 files", got)
	}
	if got.LastRun == nil || got.LastRun.RunID != ids[2] {
		t.Errorf("last run: got %+v, want %s", got.LastRun, ids[2])
	}
	if got.JobFile != w.jobFile {
		t.Errorf("job file: got %q, want %q", got.JobFile, w.jobFile)
	}
	if code, body := w.get("/api/v1/jobs/nope"); code != http.StatusNotFound || !strings.Contains(string(body), `"error"`) {
		t.Errorf("unknown job: got %d %s, want 404 with an error", code, body)
	}
}

// tidemarkJSON runs the CLI (go run) and returns its stdout.
func tidemarkJSON(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"run", "../cmd/tidemark"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tidemark %v: %v", args, err)
	}
	return out
}

// TestBookmarkSameAsCLI: the bookmark route answers bookmark show --json
// byte for byte.
func TestBookmarkSameAsCLI(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.serve(nil)
	code, body := w.get(jobPath("/bookmark"))
	if code != http.StatusOK {
		t.Fatalf("bookmark: got %d %s", code, body)
	}
	if testing.Short() {
		return
	}
	if cli := tidemarkJSON(t, "bookmark", "show", "--json", "--state", w.state, jobName); string(cli) != string(body) {
		t.Errorf("bookmark: got\n%s\nthe CLI prints\n%s", body, cli)
	}
}

func TestRunsPaging(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.serve(nil)
	var page struct {
		Runs       []view.Run `json:"runs"`
		NextBefore int64      `json:"next_before"`
	}
	w.getJSON(jobPath("/runs?limit=2"), &page)
	if got, want := runIDs(page.Runs), []string{ids[2], ids[1]}; !slices.Equal(got, want) || page.NextBefore != 2 {
		t.Errorf("first page: got %q next %d, want %q next 2", got, page.NextBefore, want)
	}
	w.getJSON(jobPath("/runs?limit=2&before=2"), &page)
	if got, want := runIDs(page.Runs), []string{ids[0]}; !slices.Equal(got, want) || page.NextBefore != 0 {
		t.Errorf("last page: got %q next %d, want %q next 0", got, page.NextBefore, want)
	}
	for _, q := range []string{"?limit=x", "?limit=-1", "?limit=1001", "?before=1.5"} {
		if code, _ := w.get(jobPath("/runs" + q)); code != http.StatusBadRequest {
			t.Errorf("runs%s: got %d, want 400", q, code)
		}
	}
}

func runIDs(runs []view.Run) []string {
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
	}
	return ids
}

func TestRunDetail(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", 2)
	w.write("b.csv", 3)
	id := w.run()
	w.serve(nil)
	var got struct {
		Run     view.Run `json:"run"`
		Outputs struct {
			Items []store.Output `json:"items"`
			Total int            `json:"total"`
		} `json:"outputs"`
		Inputs struct {
			Items []struct {
				Ctx  string `json:"ctx"`
				Path string `json:"path"`
				Size int64  `json:"size"`
			} `json:"items"`
			Total int `json:"total"`
		} `json:"inputs"`
		Attempts []view.Run `json:"attempts"`
	}
	w.getJSON(jobPath("/runs/"+id+"?limit=1&offset=1"), &got)
	if got.Run.RunID != id || got.Run.Sources["orders"].Rows != 5 {
		t.Errorf("run: got %+v, want %s with 5 rows", got.Run, id)
	}
	if got.Inputs.Total != 2 || len(got.Inputs.Items) != 1 || got.Inputs.Items[0].Path != "b.csv" || got.Inputs.Items[0].Ctx != "orders" {
		t.Errorf("inputs: got %+v, want b.csv of 2", got.Inputs)
	}
	if got.Outputs.Total < 1 || len(got.Outputs.Items) > 1 {
		t.Errorf("outputs: got %+v, want a page of at most 1 of at least 1", got.Outputs)
	}
	if len(got.Attempts) != 1 || got.Attempts[0].RunID != id {
		t.Errorf("attempts: got %q, want just %s", runIDs(got.Attempts), id)
	}
	if code, _ := w.get(jobPath("/runs/20990101T000000Z-nope00")); code != http.StatusNotFound {
		t.Errorf("unknown run: got %d, want 404", code)
	}
}

// TestAttempts: a failed run and the success after it form one chain.
func TestAttempts(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", 1)
	w.run()
	w.write("b.csv", 1)
	runs := []string{w.runFailing()}
	runs = append(runs, w.run())
	w.serve(nil)
	var got struct {
		Attempts []view.Run `json:"attempts"`
	}
	w.getJSON(jobPath("/runs/"+runs[1]), &got)
	if ids := runIDs(got.Attempts); !slices.Equal(ids, []string{runs[1], runs[0]}) || got.Attempts[1].Status != store.StatusFailed {
		t.Errorf("attempts: got %q, want %q", ids, []string{runs[1], runs[0]})
	}
}

// TestFailedRunStartedFrom: a failed run committed no version (its
// version is 0); its detail says the bookmark version it started from.
func TestFailedRunStartedFrom(t *testing.T) {
	w := newWorld(t)
	w.write("a.csv", 1)
	w.run()
	w.write("b.csv", 1)
	w.run()
	w.write("c.csv", 1)
	failed := w.runFailing()
	w.serve(nil)
	var got struct {
		Run         view.Run `json:"run"`
		StartedFrom *int64   `json:"started_from"`
		Inputs      struct {
			Total int `json:"total"`
		} `json:"inputs"`
	}
	w.getJSON(jobPath("/runs/"+failed), &got)
	if got.Run.Status != store.StatusFailed {
		t.Fatalf("run %s: got status %q, want failed", failed, got.Run.Status)
	}
	if got.StartedFrom == nil || *got.StartedFrom != 2 {
		t.Errorf("started_from: got %v, want 2 (the version the two runs before committed)", got.StartedFrom)
	}
	// What the page says of a failed run's inputs: the store records none
	// before the commit.
	if got.Run.Version != 0 || got.Inputs.Total != 0 {
		t.Errorf("failed run: got version %d and %d inputs, want 0 and 0 (none recorded before a commit)", got.Run.Version, got.Inputs.Total)
	}
}

// TestJobsSuccessRateAndLastRead: the jobs list says how many of the
// recent runs succeeded, and which run last read data (a run that found
// nothing new is not it).
func TestJobsSuccessRateAndLastRead(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.run() // nothing new: reads nothing
	w.write("d.csv", 1)
	w.runFailing()
	w.serve(nil)
	var got struct {
		Jobs []struct {
			Recent *struct {
				Runs      int `json:"runs"`
				Succeeded int `json:"succeeded"`
				Failed    int `json:"failed"`
			} `json:"recent"`
			LastRead *view.Run `json:"last_read_run"`
		} `json:"jobs"`
	}
	w.getJSON("/api/v1/jobs", &got)
	if len(got.Jobs) != 1 {
		t.Fatalf("jobs: got %d, want 1", len(got.Jobs))
	}
	j := got.Jobs[0]
	if j.Recent == nil || j.Recent.Runs != 5 || j.Recent.Succeeded != 4 || j.Recent.Failed != 1 {
		t.Errorf("recent: got %+v, want 5 runs, 4 succeeded, 1 failed", j.Recent)
	}
	if j.LastRead == nil || j.LastRead.RunID != ids[2] || j.LastRead.Sources["orders"].Rows != 3 {
		t.Errorf("last run that read data: got %+v, want %s (3 rows)", j.LastRead, ids[2])
	}
}
