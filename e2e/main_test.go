package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

var (
	// tidemarkBin is the binary built once by TestMain.
	tidemarkBin string
	// duck is an in-memory DuckDB used to read sinks back and to write
	// Parquet inputs.
	duck *sql.DB
)

// cmdTimeout bounds one tidemark invocation; a run that hangs fails its test
// instead of the whole suite. Runs on a Spark Connect server (a JVM on a
// shared, loaded machine) take minutes at worst.
const cmdTimeout = 4 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "tidemark-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: finding the module root:", err)
		return 1
	}
	tidemarkBin = filepath.Join(tmp, "tidemark")
	build := exec.Command("go", "build", "-o", tidemarkBin, "./cmd/tidemark")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/tidemark: %v\n%s", err, out)
		return 1
	}

	duck, err = sql.Open("duckdb", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: opening duckdb:", err)
		return 1
	}
	defer duck.Close()
	defer stopSharedS3()
	return m.Run()
}

// moduleRoot is the folder of the go.mod that holds this package.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}

// result is one finished tidemark invocation.
type result struct {
	args   []string
	code   int            // exit code; -1 when killed by a signal
	signal syscall.Signal // the signal that ended it, 0 if none
	stdout string
	stderr string
	took   time.Duration
}

func (r result) String() string {
	how := fmt.Sprintf("exit %d", r.code)
	if r.signal != 0 {
		how = "killed by " + r.signal.String()
	}
	return fmt.Sprintf("tidemark %s: %s after %v\n--- stdout:\n%s\n--- stderr:\n%s",
		strings.Join(r.args, " "), how, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// output is stdout and stderr together, for checking what a message names.
func (r result) output() string { return r.stdout + "\n" + r.stderr }

// baseEnv is the test process's environment without TIDEMARK_ and AWS_
// variables (and SPARK_REMOTE), so that a developer's TIDEMARK_STATE,
// TIDEMARK_FAULT, AWS profile or Spark server cannot leak into a test.
func baseEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TIDEMARK_") && !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "SPARK_REMOTE=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// command prepares a tidemark invocation in dir with extra environment.
func command(ctx context.Context, dir string, env []string, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer) {
	cmd := exec.CommandContext(ctx, tidemarkBin, args...)
	cmd.Dir = dir
	cmd.Env = baseEnv(env...)
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	return cmd, &stdout, &stderr
}

// finish turns a finished command's error into a result.
func finish(t testing.TB, ctx context.Context, args []string, start time.Time, err error, stdout, stderr *syncbuf.Buffer) result {
	t.Helper()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	if ctx.Err() != nil {
		t.Fatalf("tidemark %s: did not finish within %v\n--- stderr:\n%s", strings.Join(args, " "), cmdTimeout, r.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	default:
		t.Fatalf("tidemark %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// tidemark runs the binary in dir and returns what it did, whatever its exit
// code.
func tidemark(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, env, args...)
	start := time.Now()
	err := cmd.Run()
	return finish(t, ctx, args, start, err, stdout, stderr)
}

// proc is a tidemark invocation running in the background.
type proc struct {
	args   []string
	cmd    *exec.Cmd
	ctx    context.Context
	cancel context.CancelFunc
	stdout *syncbuf.Buffer
	stderr *syncbuf.Buffer
	start  time.Time
	done   chan struct{}
	err    error
}

// startTidemark starts the binary without waiting for it.
func startTidemark(t testing.TB, dir string, env []string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	cmd, stdout, stderr := command(ctx, dir, env, args...)
	p := &proc{args: args, cmd: cmd, ctx: ctx, cancel: cancel, stdout: stdout, stderr: stderr, start: time.Now(), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting tidemark %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitFor waits until the process's stderr contains s, and fails the test
// if the process ends first or timeout passes.
func (p *proc) waitFor(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.stderr.String(), s) {
		if p.exited() {
			t.Fatalf("tidemark %s ended before printing %q\n--- stderr:\n%s", strings.Join(p.args, " "), s, p.stderr.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("tidemark %s did not print %q within %v\n--- stderr:\n%s", strings.Join(p.args, " "), s, timeout, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait waits for the process and returns what it did.
func (p *proc) wait(t testing.TB) result {
	t.Helper()
	<-p.done
	defer p.cancel()
	return finish(t, p.ctx, p.args, p.start, p.err, p.stdout, p.stderr)
}
