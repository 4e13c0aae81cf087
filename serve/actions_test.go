package serve_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/serve/view"
)

// action POSTs body to the job's reset with the token, the CSRF cookie and
// header as given ("" leaves each out).
func (w *world) action(token, cookie, header, body string) (int, []byte) {
	w.t.Helper()
	req, err := http.NewRequest("POST", w.srv.URL+jobPath("/reset"), strings.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "tidemark_csrf", Value: cookie})
	}
	if header != "" {
		req.Header.Set("X-Tidemark-CSRF", header)
	}
	req.Header.Set("X-Tidemark-Actor", "alice")
	return w.do(req)
}

// session GETs /api/v1/session and returns the CSRF cookie and actions.
func (w *world) session() (string, bool) {
	w.t.Helper()
	resp, err := w.srv.Client().Get(w.srv.URL + "/api/v1/session")
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Actions bool `json:"actions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		w.t.Fatal(err)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "tidemark_csrf" {
			return c.Value, got.Actions
		}
	}
	w.t.Fatalf("session: no tidemark_csrf cookie")
	return "", false
}

func TestResetNeedsTokenAndCSRF(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.token = "s3cret-token-value"
	w.serve(nil)
	csrf, actions := w.session()
	if !actions {
		t.Errorf("session: got actions false, want true")
	}
	body := `{"dry_run":true}`
	for _, c := range []struct{ name, token, cookie, header string }{
		{"no token", "", csrf, csrf},
		{"wrong token", "nope", csrf, csrf},
		{"no CSRF header", w.token, csrf, ""},
		{"CSRF header not the cookie", w.token, csrf, "other"},
		{"no cookie", w.token, "", csrf},
	} {
		if code, got := w.action(c.token, c.cookie, c.header, body); code != http.StatusForbidden || !strings.Contains(string(got), `"error"`) {
			t.Errorf("%s: got %d %s, want 403 with an error", c.name, code, got)
		}
	}
	if code, _ := w.action(w.token, csrf, csrf, body); code != http.StatusOK {
		t.Errorf("with token and CSRF: got %d, want 200", code)
	}
	for _, b := range []string{`{"dry_run":"yes"}`, `{"nope":1}`, `[`} {
		if code, _ := w.action(w.token, csrf, csrf, b); code != http.StatusBadRequest {
			t.Errorf("body %s: got %d, want 400", b, code)
		}
	}
	if strings.Contains(w.logs.String(), w.token) {
		t.Errorf("the log holds the token")
	}
}

func TestResetOffWithoutToken(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.serve(nil)
	csrf, actions := w.session()
	if actions {
		t.Errorf("session: got actions true, want false")
	}
	if code, _ := w.action("anything", csrf, csrf, `{"dry_run":true}`); code != http.StatusNotFound {
		t.Errorf("reset without a token configured: got %d, want 404", code)
	}
}

// TestResetDryRunThenReset: the dry run lists what the rewind with purge
// undoes and deletes and changes nothing; the reset does it, is logged
// with who asked, and the runs show it.
func TestResetDryRunThenReset(t *testing.T) {
	w := newWorld(t)
	ids := w.threeRuns()
	w.token = "tok-123456"
	w.serve(nil)
	csrf, _ := w.session()
	req := `{"to_run":"` + ids[0] + `","purge":true,"dry_run":true}`
	code, body := w.action(w.token, csrf, csrf, req)
	if code != http.StatusOK {
		t.Fatalf("dry run: got %d %s", code, body)
	}
	var dry struct {
		Undo   []string `json:"undo"`
		Delete []string `json:"delete"`
	}
	if err := json.Unmarshal(body, &dry); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dry.Undo, ids[1:]) || len(dry.Delete) != 2 {
		t.Fatalf("dry run: got %+v, want undo %q and two files", dry, ids[1:])
	}
	for _, f := range dry.Delete {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("after the dry run: %v", err)
		}
	}
	code, body = w.action(w.token, csrf, csrf, strings.Replace(req, `"dry_run":true`, `"dry_run":false`, 1))
	if code != http.StatusOK {
		t.Fatalf("reset: got %d %s", code, body)
	}
	var res struct {
		Version int64    `json:"version"`
		Undone  []string `json:"undone"`
		Deleted []string `json:"deleted"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Deleted)
	slices.Sort(dry.Delete)
	if res.Version != 4 || !slices.Equal(res.Deleted, dry.Delete) {
		t.Errorf("reset: got %+v, want version 4 deleting %q", res, dry.Delete)
	}
	for _, f := range dry.Delete {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("after the reset: %s is still there", f)
		}
	}
	if log := w.logs.String(); !strings.Contains(log, "audit: reset") || !strings.Contains(log, "actor=alice") {
		t.Errorf("log: got %q, want an audit line naming alice", log)
	}
	var page struct {
		Runs []view.Run `json:"runs"`
	}
	w.getJSON(jobPath("/runs"), &page)
	for _, r := range page.Runs[:2] {
		if !r.Undone || !r.Purged {
			t.Errorf("run %s after the reset: got undone %v purged %v, want both", r.RunID, r.Undone, r.Purged)
		}
	}
	if code, _ := w.action(w.token, csrf, csrf, `{"to_run":"nope","dry_run":true}`); code != http.StatusBadRequest {
		t.Errorf("dry run to an unknown run: got %d, want 400", code)
	}
}
