package serve_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidemark-etl/tidemark/serve"
)

// getAs GETs path with the Host header host (and a bearer token unless
// empty) and returns the status and body.
func (w *world) getAs(host, path, token string) (int, string) {
	w.t.Helper()
	req, err := http.NewRequest("GET", w.srv.URL+path, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, body := w.do(req)
	return code, string(body)
}

// TestHostMustNameServer: a page that rebinds its DNS name to the
// server's address reads nothing (its name is the Host the browser sends):
// only the listen address, loopback names for a loopback server, IP
// addresses for one listening everywhere, and the names allowed answer.
func TestHostMustNameServer(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	port := strings.TrimPrefix(w.srv0Port(), ":")
	paths := []string{"/api/v1/jobs", jobPath("/runs"), jobPath(""), "/metrics", "/", "/api/v1/session"}
	for _, c := range []struct {
		name  string
		edit  func(*serve.Options)
		hosts map[string]bool // Host -> answered
	}{
		{"loopback", nil, map[string]bool{"127.0.0.1:" + port: true, "localhost:" + port: true, "LOCALHOST": true,
			"[::1]:" + port: true, "rebind.attacker.example:" + port: false, "127.0.0.1.attacker.example": false,
			"10.0.0.5:" + port: false}},
		{"every interface", func(o *serve.Options) { o.Listen = "0.0.0.0:8484" },
			map[string]bool{"10.0.0.5:8484": true, "localhost:8484": true, "rebind.attacker.example:8484": false}},
		{"one address", func(o *serve.Options) { o.Listen = "10.0.0.5:8484" },
			map[string]bool{"10.0.0.5:8484": true, "10.0.0.6:8484": false, "rebind.attacker.example:8484": false}},
		{"allowed names", func(o *serve.Options) { o.AllowHosts = []string{"tidemark.internal", "Dash.Example:443"} },
			map[string]bool{"tidemark.internal:" + port: true, "tidemark.internal.": true, "dash.example": true,
				"127.0.0.1:" + port: true, "rebind.attacker.example": false}},
	} {
		w.serve(c.edit)
		for host, ok := range c.hosts {
			for _, p := range paths {
				code, body := w.getAs(host, p, "")
				switch {
				case ok && code != http.StatusOK:
					t.Errorf("%s: GET %s with Host %q: got %d %s, want 200", c.name, p, host, code, body)
				case !ok && (code != http.StatusForbidden || strings.Contains(body, jobName) || !strings.Contains(body, "--allow-host")):
					t.Errorf("%s: GET %s with Host %q: got %d %s, want 403 naming --allow-host and no job", c.name, p, host, code, body)
				}
			}
		}
	}
}

// srv0Port is the port of the test server (serve's listen port).
func (w *world) srv0Port() string {
	w.serve(nil)
	u, err := url.Parse(w.srv.URL)
	if err != nil {
		w.t.Fatal(err)
	}
	return u.Port()
}

// TestReadToken: with ReadToken the API's reads and the metrics need the
// token; the dashboard's files, the session and the OpenAPI document,
// which hold no state, do not.
func TestReadToken(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.token = "s3cret-token-value"
	w.serve(func(o *serve.Options) { o.ReadToken = true })
	host := strings.TrimPrefix(w.srv.URL, "http://")
	for _, p := range []string{"/api/v1/jobs", jobPath(""), jobPath("/runs"), jobPath("/bookmark"), "/metrics"} {
		for _, tok := range []string{"", "wrong"} {
			if code, body := w.getAs(host, p, tok); code != http.StatusUnauthorized || strings.Contains(body, jobName) {
				t.Errorf("GET %s with token %q: got %d %s, want 401 without the job", p, tok, code, body)
			}
		}
		if code, body := w.getAs(host, p, w.token); code != http.StatusOK || !strings.Contains(body, jobName) {
			t.Errorf("GET %s with the token: got %d %s, want 200 with the job", p, code, body)
		}
	}
	for _, p := range []string{"/", "/api/v1/session", "/api/v1/openapi.json"} {
		if code, body := w.getAs(host, p, ""); code != http.StatusOK {
			t.Errorf("GET %s without the token: got %d %s, want 200", p, code, body)
		}
	}
	if _, err := serve.New(serve.Options{Store: w.st, ReadToken: true}); err == nil {
		t.Errorf("ReadToken without a Token: got no error")
	}
}

// TestActionOrigin: an action with the token and the CSRF header is still
// refused when a browser says another site sent it.
func TestActionOrigin(t *testing.T) {
	w := newWorld(t)
	w.threeRuns()
	w.token = "s3cret-token-value"
	w.serve(nil)
	csrf, _ := w.session()
	for _, c := range []struct {
		name, origin, site string
		code               int
	}{
		{"own origin", w.srv.URL, "same-origin", http.StatusOK},
		{"no origin (curl)", "", "", http.StatusOK},
		{"another origin", "http://attacker.example", "", http.StatusForbidden},
		{"opaque origin", "null", "", http.StatusForbidden},
		{"another port", "http://127.0.0.1:1", "", http.StatusForbidden},
		{"cross-site fetch", "", "cross-site", http.StatusForbidden},
		{"same-site fetch", "", "same-site", http.StatusForbidden},
	} {
		req, err := http.NewRequest("POST", w.srv.URL+jobPath("/reset"), strings.NewReader(`{"dry_run":true}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+w.token)
		req.AddCookie(&http.Cookie{Name: "tidemark_csrf", Value: csrf})
		req.Header.Set("X-Tidemark-CSRF", csrf)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		if c.site != "" {
			req.Header.Set("Sec-Fetch-Site", c.site)
		}
		if code, body := w.do(req); code != c.code {
			t.Errorf("%s: got %d %s, want %d", c.name, code, body, c.code)
		}
	}
}
