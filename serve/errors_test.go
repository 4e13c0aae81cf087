package serve_test

import (
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/serve"
)

// TestNoSecretInAnswers: a state location with a password in its query
// never appears in an answer, whatever the route says.
func TestNoSecretInAnswers(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.token = "tok-abcdef"
	const password = "hunter2-pass-word"
	w.serve(func(o *serve.Options) {
		o.StateLocation = "postgres://u:" + password + "@db:5432/x?password=" + password
	})
	csrf, _ := w.session()
	paths := []string{"/api/v1/jobs", jobPath(""), jobPath("/plan"), jobPath("/bookmark"), jobPath("/runs"),
		jobPath("/runs/" + ids[0]), "/api/v1/openapi.json", "/api/v1/nope", "/"}
	for _, p := range paths {
		if _, body := w.get(p); strings.Contains(string(body), password) {
			t.Errorf("GET %s: the answer holds the password:\n%s", p, body)
		}
	}
	for _, b := range []string{`{"dry_run":false}`, `{"dry_run":true}`} {
		code, body := w.action(w.token, csrf, csrf, b)
		if strings.Contains(string(body), password) || strings.Contains(string(body), w.token) {
			t.Errorf("reset %s: the answer holds a secret:\n%s", b, body)
		}
		if code == http.StatusInternalServerError {
			t.Errorf("reset %s: got 500", b)
		}
	}
	if strings.Contains(w.logs.String(), password) {
		t.Errorf("the log holds the password:\n%s", w.logs.String())
	}
}

// TestPlanRoute: the plan comes from the recorded job file; once the file
// is gone the answer is a 409 that says so.
func TestPlanRoute(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.write("d.csv", 1)
	var now atomic.Int64 // the server's clock, in Unix seconds
	w.serve(func(o *serve.Options) { o.Now = func() time.Time { return time.Unix(now.Load(), 0) } })
	var plan planAnswer
	w.getJSON(jobPath("/plan"), &plan)
	if plan.Job != jobName || plan.Version != 3 || plan.Sources["orders"].Files != 1 {
		t.Errorf("plan: got %+v, want version 3 and one file", plan)
	}
	if err := os.Remove(w.jobFile); err != nil {
		t.Fatal(err)
	}
	w.getJSON(jobPath("/plan"), &plan) // within PlanEvery: the same plan
	if plan.Sources["orders"].Files != 1 {
		t.Errorf("plan within PlanEvery: got %+v, want the cached one", plan)
	}
	now.Add(60)
	code, body := w.get(jobPath("/plan"))
	if code != http.StatusConflict || !strings.Contains(string(body), "job file") {
		t.Errorf("plan without its job file: got %d %s, want 409 naming the job file", code, body)
	}
	var jobs jobsAnswer
	w.getJSON("/api/v1/jobs", &jobs)
	if jobs.Jobs[0].BacklogError == "" || string(jobs.Jobs[0].Backlog) != "null" {
		t.Errorf("jobs without the job file: got backlog %s error %q, want null and an error", jobs.Jobs[0].Backlog, jobs.Jobs[0].BacklogError)
	}
}
