package web

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// dumpDOM loads url in headless chromium and returns the DOM once the
// page's fetches are done (virtual time), or skips without chromium.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", url, err)
	}
	return string(out)
}

func count(dom, attr string) int { return strings.Count(dom, attr) }

// checkEscaped fails when the page turned data into elements.
func checkEscaped(t *testing.T, dom string) {
	t.Helper()
	if strings.Contains(dom, "PWNED") && regexp.MustCompile(`<img[^>]*onerror|<title>PWNED`).MatchString(dom) {
		t.Errorf("a name was parsed as HTML: the page holds an <img onerror> or the title changed")
	}
	if !strings.Contains(dom, "&lt;img src=x onerror=") {
		t.Errorf("the evil name is not shown as text")
	}
}

func TestPagesRenderTheAPIsNumbers(t *testing.T) {
	srv := httptest.NewServer(fakeAPI(t))
	defer srv.Close()

	t.Run("jobs", func(t *testing.T) {
		dom := dumpDOM(t, srv.URL+"/#/")
		if got, want := count(dom, `data-test="job-row"`), 2; got != want {
			t.Fatalf("job rows: got %d, want %d\n%s", got, want, dom)
		}
		for _, want := range []string{`data-job="nightly"`, `data-rows-in="1500"`, `data-rows-out="1400"`, `data-version="3"`,
			`data-test="backlog-files">5<`, `data-test="backlog-error"`, `href="#/jobs/%3Cimg%20src%3Dx`} {
			if !strings.Contains(dom, want) {
				t.Errorf("jobs page: got no %s", want)
			}
		}
		checkEscaped(t, dom)
	})
	t.Run("job", func(t *testing.T) {
		dom := dumpDOM(t, srv.URL+"/#/jobs/nightly")
		if got, want := count(dom, `data-test="run-row"`), 2; got != want {
			t.Errorf("run rows (first page): got %d, want %d", got, want)
		}
		if got, want := count(dom, `data-test="newest-file-row"`), 2; got != want {
			t.Errorf("newest file rows: got %d, want %d", got, want)
		}
		for _, want := range []string{`data-test="runs-more"`, `data-test="chart-rows" data-points="2"`, `data-test="chart-duration"`, `<canvas`,
			`data-test="bookmark-files">42<`, `data-test="band-count">1<`, `data-test="key-mark">2025-01-03, 17<`,
			`data-test="high-water">2025-01-01 00:00:00 UTC<`, `data-test="plan-now"`, `data-test="rewind" data-run="r3"`,
			`data-test="history-row" data-kind="rewind" data-by="serve 127.0.0.1:5 &lt;img`, `data-test="history-row" data-kind="reset" data-by="cli alice@host"`,
			`data-test="chart-rows" data-points="2" data-marks="2"`, `data-test="newest-file-row" data-ctx="`, `data-path="in/new.csv"`,
			`data-test="newest-size">2.0 KiB<`, `data-test="bookmark-rows">300<`, `data-test="bookmark-runs">2<`,
			`data-test="keys">updated_at, id (asc)<`, `data-test="regressions">not read by the last run<`,
			`data-test="bookmark-bytes">4.0 KiB<`} {
			if !strings.Contains(dom, want) {
				t.Errorf("job page: got no %s", want)
			}
		}
		checkEscaped(t, dom)
	})
	t.Run("run", func(t *testing.T) {
		dom := dumpDOM(t, srv.URL+"/#/jobs/nightly/runs/r2")
		for _, want := range []string{`data-test="source-row"`, `data-test="sink-row" data-ctx="out" data-files="1" data-bytes="1024" data-rows="0"`,
			`data-test="input-row"`, `data-test="output-row"`, `data-test="outputs-range" data-offset="0" data-total="250"`,
			`data-test="attempt-row" data-run="r2"`, `data-test="run-error"`, `&lt;script&gt;document.title='PWNED'&lt;/script&gt;`,
			`data-test="bookmark-diff" data-version="3" data-before="2"`, `data-field="files processed"`, `data-test="diff-before">40<`,
			`data-test="diff-after">42<`, `data-field="column removed"`, `data-field="column added"`,
			`data-ctx="new" data-field="source"`, `data-ctx="new" data-field="high-water mark"`} {
			if !strings.Contains(dom, want) {
				t.Errorf("run page: got no %s", want)
			}
		}
		checkEscaped(t, dom)
	})
	t.Run("locked", func(t *testing.T) {
		dom := dumpDOM(t, srv.URL+"/#/jobs/locked")
		if !strings.Contains(dom, `data-test="error" data-status="503"`) || !strings.Contains(dom, "state store is locked by run r9") {
			t.Errorf("a 503: got no error message naming the lock\n%s", dom)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		dom := dumpDOM(t, srv.URL+"/#/jobs/nope")
		if !strings.Contains(dom, `data-status="404"`) || !strings.Contains(dom, "no job nope") {
			t.Errorf("a 404: got no error message\n%s", dom)
		}
	})
}
