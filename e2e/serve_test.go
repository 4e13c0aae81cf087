package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeCLI: serve refuses a bad --listen and an unset --token-env
// (exit 2), serves the API over a state filled by a run (the run's record
// as runs --json shows it), and stops cleanly on SIGTERM (exit 0).
func TestServeCLI(t *testing.T) {
	f := newFixture(t, jobOpts{})
	f.addCSV("a.csv", 5)
	s := f.mustRun()
	state := filepath.Join(f.dir, ".tidemark", "state.db")
	for _, args := range [][]string{
		{"serve", "--state", state, "--listen", "nope"},
		{"serve", "--state", state, "--token-env", "TIDEMARK_E2E_UNSET_TOKEN"},
	} {
		if r := f.tidemark(nil, args...); r.code != 2 {
			t.Errorf("tidemark %v: got exit %d, want 2\n%v", args, r.code, r)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	p := f.start(nil, "serve", "--state", state, "--listen", addr)
	p.waitFor(t, "serving", 30*time.Second)
	resp, err := http.Get("http://" + addr + "/api/v1/jobs/" + s.Job + "/runs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var page struct {
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != 200 || len(page.Runs) != 1 {
		t.Fatalf("GET runs: got %d %s, want one run", resp.StatusCode, body)
	}
	var cli []json.RawMessage
	r := f.tidemark(nil, "runs", "--json", "--state", state, s.Job)
	if err := json.Unmarshal([]byte(r.stdout), &cli); err != nil || len(cli) != 1 {
		t.Fatalf("runs --json: %v\n%v", err, r)
	}
	// The API's run is runs --json's object with "seq" added.
	if got, want := strings.Replace(string(page.Runs[0]), `,"seq":1}`, "}", 1), string(cli[0]); got != want {
		t.Errorf("run: got\n%s\nruns --json says\n%s", got, want)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if res := p.wait(t); res.code != 0 || !strings.Contains(res.stderr, "shutting down") {
		t.Errorf("serve after SIGTERM: got exit %d, want 0 after shutting down\n%v", res.code, res)
	}
}
