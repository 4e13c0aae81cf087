package e2e

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeHostAndReadToken: the real binary answers only requests whose
// Host names it (a page that rebinds its DNS name to 127.0.0.1 reads
// nothing), a name given with --allow-host too; with --read-token the API
// needs the --token-env token; --read-token without a token is exit 2.
func TestServeHostAndReadToken(t *testing.T) {
	f := newFixture(t, jobOpts{})
	f.addCSV("a.csv", 5)
	s := f.mustRun()
	state := filepath.Join(f.dir, ".tidemark", "state.db")
	if r := f.tidemark(nil, "serve", "--state", state, "--read-token"); r.code != 2 || !strings.Contains(r.stderr, "--token-env") {
		t.Errorf("serve --read-token without --token-env: got exit %d, want 2 naming --token-env\n%v", r.code, r)
	}
	token := randomToken(t)
	f.secrets = append(f.secrets, token)
	addr := loopbackAddr(t)
	p := f.start([]string{"TIDEMARK_SERVE_TOKEN=" + token}, "serve", "--state", state, "--listen", addr,
		"--token-env", "TIDEMARK_SERVE_TOKEN", "--read-token", "--allow-host", "dash.test")
	p.waitFor(t, "serving", 30*time.Second)
	defer p.cmd.Process.Kill()
	get := func(host, tok string) (int, string) {
		req, err := http.NewRequest("GET", "http://"+addr+"/api/v1/jobs/"+s.Job+"/runs", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	port := addr[strings.LastIndex(addr, ":"):]
	for _, c := range []struct {
		host, token string
		code        int
	}{
		{"rebind.attacker.example" + port, token, http.StatusForbidden},
		{addr, "", http.StatusUnauthorized},
		{addr, "wrong", http.StatusUnauthorized},
		{addr, token, http.StatusOK},
		{"localhost" + port, token, http.StatusOK},
		{"dash.test", token, http.StatusOK},
	} {
		code, body := get(c.host, c.token)
		if code != c.code || (code != http.StatusOK) == strings.Contains(body, s.RunID) {
			t.Errorf("GET runs with Host %q, token %v: got %d %s, want %d", c.host, c.token != "", code, body, c.code)
		}
	}
}
