package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

// The environment the browser tests read; scripts/test.sh sets the first
// two (Debian's chromium and a venv with Playwright for Python).
const (
	envBrowserPython    = "TIDEMARK_TEST_PYTHON"
	envBrowserChromium  = "TIDEMARK_TEST_CHROMIUM"
	envBrowserSkip      = "TIDEMARK_SKIP_BROWSER"
	envBrowserArtifacts = "TIDEMARK_TEST_ARTIFACTS"
)

// browserTimeout bounds one run of a browser script.
const browserTimeout = 90 * time.Second

// browserTools is what a browser test drives: a python with Playwright
// and the chromium it launches.
type browserTools struct {
	python   string
	chromium string
}

// needBrowser finds the browser tools, failing the test when they are
// missing (skipping it only under TIDEMARK_SKIP_BROWSER=1).
func needBrowser(t *testing.T) browserTools {
	t.Helper()
	b := browserTools{python: os.Getenv(envBrowserPython), chromium: os.Getenv(envBrowserChromium)}
	if b.python != "" && b.chromium != "" {
		return b
	}
	if os.Getenv(envBrowserSkip) == "1" {
		t.Skipf("%s=1: no browser", envBrowserSkip)
	}
	t.Fatalf("%s and %s are not set: run the tests through scripts/test.sh, which installs chromium and Playwright "+
		"(or set %s=1 to skip the browser tests)", envBrowserPython, envBrowserChromium, envBrowserSkip)
	return b
}

// artifactsDir is where a browser test saves its screenshots:
// $TIDEMARK_TEST_ARTIFACTS/<test name>, or a temporary folder.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv(envBrowserArtifacts); root != "" {
		dir = filepath.Join(root, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.RemoveAll(dir); err != nil { // screenshots of an earlier run
			t.Fatalf("emptying the artifacts folder: %v", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("making the artifacts folder: %v", err)
		}
	}
	t.Logf("browser artifacts (screenshots) in %s", dir)
	return dir
}

// randomToken is a fresh secret for serve's actions.
func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// loopbackAddr is a loopback address with a port that was free a moment ago.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// server is a running `tidemark serve`.
type server struct {
	p   *proc
	url string // http://127.0.0.1:PORT
}

// startServe starts `tidemark serve` on a free loopback port over the
// state store and waits until it answers. With a token the actions are on
// (read from the environment variable named by --token-env).
func (f *fixture) startServe(state, token string) *server {
	f.t.Helper()
	addr := loopbackAddr(f.t)
	args := []string{"serve", "--state", state, "--listen", addr}
	var env []string
	if token != "" {
		env = append(env, "TIDEMARK_SERVE_TOKEN="+token)
		args = append(args, "--token-env", "TIDEMARK_SERVE_TOKEN")
		f.secrets = append(f.secrets, token)
	}
	s := &server{p: f.start(env, args...), url: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.url + "/api/v1/jobs")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if s.p.exited() {
			f.t.Fatalf("tidemark %s ended before answering\n%v", strings.Join(args, " "), s.p.wait(f.t))
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("tidemark %s: GET /api/v1/jobs did not answer 200 within 30s (last: %v)\n--- stderr:\n%s",
				strings.Join(args, " "), err, s.p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkQuiet fails the test if serve printed a secret.
func (s *server) checkQuiet(f *fixture) {
	f.t.Helper()
	out := s.p.stdout.String() + s.p.stderr.String()
	for _, secret := range f.secrets {
		if secret != "" && strings.Contains(out, secret) {
			f.t.Errorf("tidemark serve printed a secret (the token or a key) in its output")
		}
	}
}

// runBrowserScript runs a Playwright script of e2e/browser/ with input
// (given as a JSON file, its only argument) and returns what it printed on
// stdout as one JSON value; it fails the test when the script fails.
func runBrowserScript(t *testing.T, b browserTools, script string, input any, out any) {
	t.Helper()
	data, err := json.MarshalIndent(input, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "input.json")
	writeFile(t, in, data)
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.python, filepath.Join("browser", script), in)
	cmd.Env = baseEnv(envBrowserChromium+"="+b.chromium, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	t.Logf("browser/%s (%v):\n%s", script, time.Since(start).Round(time.Millisecond), stderr.String())
	if ctx.Err() != nil {
		t.Fatalf("browser/%s did not finish within %v\n--- stdout:\n%s", script, browserTimeout, stdout.String())
	}
	if err != nil {
		t.Fatalf("browser/%s: %v\n--- stdout:\n%s", script, err, stdout.String())
	}
	if out != nil {
		if err := json.Unmarshal([]byte(stdout.String()), out); err != nil {
			t.Fatalf("browser/%s: decoding its stdout as JSON: %v\n%s", script, err, stdout.String())
		}
	}
}
