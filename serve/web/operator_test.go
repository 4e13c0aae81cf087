package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// operatorAPI is fakeAPI with the jobs an operator meets on a bad day: a
// job whose plan failed after a failed run, a job whose backlog has files
// of unknown row count, and a job ("slow") whose runs take minutes and
// bunch on the clock.
func operatorAPI(t *testing.T) http.Handler {
	t.Helper()
	mux := http.NewServeMux()
	slow := []any{
		withDuration(result("slow", "s3", 3, "succeeded", 900, 800, false, "2025-01-02T00:00:02Z"), 130000),
		withDuration(result("slow", "s2", 2, "failed", 0, 0, false, "2025-01-02T00:00:01Z"), 100000),
		withDuration(result("slow", "s1", 1, "succeeded", 500, 400, false, "2024-12-01T00:00:00Z"), 45000),
	}
	slow[1].(map[string]any)["version"] = 0                // a failed run commits no version
	slow[1].(map[string]any)["sources"] = map[string]any{} // nor counts what it did not read
	failed := result("planfail", "p1", 1, "failed", 0, 0, false, "2025-01-02T00:00:00Z")
	failed["error"] = "reading in/bad.csv line 3: column amount: not a number"
	mux.HandleFunc("GET /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"jobs": []any{
			map[string]any{"job": "planfail", "version": 0, "run_id": "", "last_run": failed, "backlog": nil,
				"backlog_error": "planning source orders: listing /data/in: no such file or directory"},
			map[string]any{"job": "nojobfile", "version": 0, "run_id": "", "last_run": nil, "backlog": nil,
				"backlog_error": "no job file known: the job's last run did not record one"},
			map[string]any{"job": "unknownrows", "version": 1, "run_id": "u1", "last_run": slow[0],
				"recent": map[string]any{"runs": 5, "succeeded": 4, "failed": 1}, "last_read_run": slow[2],
				"backlog": map[string]any{"job": "unknownrows", "mode": "enable", "version": 1, "sources": map[string]any{
					"in": map[string]any{"files": 5, "bytes": 5120, "new": []any{}, "modified": 0, "unchanged": 0, "deferred": 0}}}},
			map[string]any{"job": "table", "version": 1, "run_id": "u1", "last_run": slow[0],
				"backlog": map[string]any{"job": "table", "mode": "enable", "version": 1, "sources": map[string]any{
					"orders": map[string]any{"files": 0, "bytes": 0, "new": []any{}, "modified": 0, "unchanged": 0, "deferred": 0, "rows": 0}}}},
		}})
	})
	mux.HandleFunc("GET /api/v1/jobs/slow", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"job": "slow", "version": 2, "run_id": "s3", "last_run": slow[0],
			"bookmark": map[string]any{"job": "slow", "version": 2, "run_id": "s3", "sources": map[string]any{}}})
	})
	mux.HandleFunc("GET /api/v1/jobs/slow/runs", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"runs": slow, "next_before": 0})
	})
	mux.HandleFunc("GET /api/v1/jobs/slow/history", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"versions": []any{}, "next_before": 0})
	})
	mux.HandleFunc("GET /api/v1/jobs/slow/runs/s2", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"run": slow[1], "started_from": 1,
			"outputs": map[string]any{"items": []any{}, "total": 0}, "inputs": map[string]any{"items": []any{}, "total": 0},
			"attempts": []any{slow[1]}, "bookmark_diff": nil})
	})
	mux.Handle("/", fakeAPI(t))
	return mux
}

func withDuration(r map[string]any, ms int) map[string]any {
	r["duration_ms"] = ms
	return r
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// attr returns the value of attribute name on the element holding
// data-test="test", or "" when there is none.
func attr(dom, test, name string) string {
	el := regexp.MustCompile(`<[a-z]+ [^>]*data-test="` + regexp.QuoteMeta(test) + `"[^>]*>`).FindString(dom)
	m := regexp.MustCompile(`\s` + regexp.QuoteMeta(name) + `="([^"]*)"`).FindStringSubmatch(el)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestJobsPageShowsErrorsAndUnknownsAsSuch: a failed run's and a failed
// plan's errors are in a labeled column, without an "unknown:" prefix,
// and a backlog of files whose rows are not counted says unknown, not 0.
func TestJobsPageShowsErrorsAndUnknownsAsSuch(t *testing.T) {
	srv := httptest.NewServer(operatorAPI(t))
	defer srv.Close()
	dom := dumpDOM(t, srv.URL+"/#/")
	if strings.Contains(dom, ">unknown: ") {
		t.Errorf("the jobs page prefixes an error with \"unknown: \"")
	}
	if !strings.Contains(dom, `<th>Last error</th>`) {
		t.Errorf("the jobs table has no \"Last error\" column")
	}
	for _, want := range []string{
		`data-test="job-problem" data-kind="run failed"`, `reading in/bad.csv line 3: column amount: not a number`,
		`data-test="job-problem" data-kind="plan failed"`, `planning source orders: listing /data/in: no such file or directory`,
		`data-test="job-problem" data-kind="no job file"`,
		`data-test="backlog-rows" title="unknown: the row count of files is known only once they are read">—<`,
		`data-test="backlog-rows">0<`, // a table source counts its rows: 0 is known
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("jobs page: got no %s", want)
		}
	}
	// The plan's error is in its labeled place only: the backlog cells of
	// a job whose plan failed say unknown.
	if got, want := attr(dom, "backlog-error", "title"), "unknown: the plan failed (see Last error)"; got != want {
		t.Errorf("backlog-error title: got %q, want %q", got, want)
	}
	unknownRows := regexp.MustCompile(`data-job="unknownrows".*?</tr>`).FindString(dom)
	if strings.Contains(unknownRows, `data-test="backlog-rows">0<`) {
		t.Errorf("5 files of unknown row count show backlog rows 0: %s", unknownRows)
	}
}

// TestJobPageChartsRunsByIndex: durations of minutes get an axis in
// minutes (not "1 min 40 s" clipped), the charts are bars per run on an
// axis of runs, not lines on the clock, rows in and out differ in
// pattern and label, and the run history comes before the charts.
func TestJobPageChartsRunsByIndex(t *testing.T) {
	srv := httptest.NewServer(operatorAPI(t))
	defer srv.Close()
	dom := dumpDOM(t, srv.URL+"/#/jobs/slow")
	if got, want := attr(dom, "chart-duration", "data-unit"), "min"; got != want {
		t.Errorf("duration axis unit: got %q, want %q", got, want)
	}
	ticks := attr(dom, "chart-duration", "data-y-ticks")
	if ticks == "" {
		t.Errorf("chart-duration has no data-y-ticks")
	}
	t.Logf("duration ticks %q; rows ticks %q", ticks, attr(dom, "chart-rows", "data-y-ticks"))
	for _, tick := range strings.FieldsFunc(ticks, func(r rune) bool { return r == '|' }) {
		if !regexp.MustCompile(`^\d+(\.\d+)? min$`).MatchString(tick) {
			t.Errorf("duration tick %q: want a number of minutes (ticks %q)", tick, ticks)
		}
	}
	for _, test := range []string{"chart-rows", "chart-bytes", "chart-duration"} {
		if got, want := attr(dom, test, "data-x"), "run"; got != want {
			t.Errorf("%s x axis: got %q, want %q", test, got, want)
		}
		if got, want := attr(dom, test, "data-x-ticks"), "#1|#2|#3"; got != want {
			t.Errorf("%s x ticks: got %q, want %q (one per run, by seq)", test, got, want)
		}
	}
	if got, want := attr(dom, "chart-rows", "data-series"), "rows in: solid bars|rows out: hatched bars"; got != want {
		t.Errorf("chart-rows series: got %q, want %q", got, want)
	}
	for _, label := range []string{">rows in<", ">rows out<"} {
		if !strings.Contains(dom, `class="u-label"`+label) {
			t.Errorf("the legend has no %s", label)
		}
	}
	// The failed run committed no version: its row says so, not 0.
	failedRow := regexp.MustCompile(`data-run="s2" data-seq="2".*?</tr>`).FindString(dom)
	if !strings.Contains(failedRow, `data-test="version" title="committed no version">—<`) {
		t.Errorf("failed run row: want version — (committed none), got %s", failedRow)
	}
	hist, charts, bm := strings.Index(dom, `data-test="runs-table"`), strings.Index(dom, `data-test="charts"`), strings.Index(dom, `data-test="bookmark"`)
	if hist < 0 || charts < 0 || bm < 0 || hist > charts || hist > bm {
		t.Errorf("run history at %d, charts at %d, bookmark at %d: want the history first", hist, charts, bm)
	}
}

// TestFailedRunPageShowsWhereItStarted: a failed run committed no
// version; its page shows the version it started from, not "version 0",
// and says why there are no inputs.
func TestFailedRunPageShowsWhereItStarted(t *testing.T) {
	srv := httptest.NewServer(operatorAPI(t))
	defer srv.Close()
	dom := dumpDOM(t, srv.URL+"/#/jobs/slow/runs/s2")
	for _, want := range []string{`data-test="started-from">version 1<`, `data-test="inputs-not-recorded"`,
		`data-test="sources-none">None counted: the run ended before it counted what it read.<`} {
		if !strings.Contains(dom, want) {
			t.Errorf("failed run page: got no %s", want)
		}
	}
	if strings.Contains(dom, `data-test="version">0<`) {
		t.Errorf("failed run page shows bookmark version 0")
	}
}

// TestJobsPageSuccessRateAndLastRead: the jobs page shows each job's
// success rate over its recent runs and the last run that read data.
func TestJobsPageSuccessRateAndLastRead(t *testing.T) {
	srv := httptest.NewServer(operatorAPI(t))
	defer srv.Close()
	dom := dumpDOM(t, srv.URL+"/#/")
	row := regexp.MustCompile(`data-job="unknownrows".*?</tr>`).FindString(dom)
	for _, want := range []string{
		`data-test="success-rate" title="4 of the last 5 runs succeeded, 1 failed">80%<`,
		`<a data-test="last-read-link" href="#/jobs/unknownrows/runs/s1">2024-12-01 00:00:00 UTC</a>`,
	} {
		if !strings.Contains(row, want) {
			t.Errorf("jobs page row unknownrows: got no %s\n%s", want, row)
		}
	}
	for _, head := range []string{">Success rate</th>", "<th>Last read data</th>"} {
		if !strings.Contains(dom, head) {
			t.Errorf("jobs table: got no %s", head)
		}
	}
}
