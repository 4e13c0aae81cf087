package glue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tidemark-etl/tidemark"
)

// LaunchOptions are the settings of Launch.
type LaunchOptions struct {
	// Script is the Glue-style script; Args its own argv after it.
	Script string
	Args   []string
	// Python runs the script (default: $TIDEMARK_PYTHON, else python3).
	Python string
	// State is the state location in force.
	State string
	// Stdin, Stdout and Stderr are the script's (default: none, this
	// process's, this process's).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// HostID names this host in leases and run records ("": hostname:pid).
	HostID string
	// LeaseTTL is the runs' lease TTL (0: tidemark's default).
	LeaseTTL time.Duration
	Log      *slog.Logger
	// Summary, if set, is given the outcome of each run the script began
	// (its summary and its error, nil if it succeeded), in the order
	// begun, once the script ended (tidemark run's summary). A run
	// refused before it was recorded is no run and has none.
	Summary func(*tidemark.Result, error)
}

// PySpark is the pyspark release series the awsglue package is written
// and tested against (awsglue._launch.PYSPARK).
const PySpark = "4.0.*"

// ErrNoCommit is a script that began a run and ended without job.commit():
// nothing it wrote was published and no bookmark moved.
var ErrNoCommit = errors.New("the script ended without job.commit(): nothing it wrote was published and no bookmark moved")

// ScriptError is a script that exited non-zero (or was killed).
type ScriptError struct {
	Script string
	Code   int    // its exit code; -1 when killed by a signal
	Signal string // the signal that killed it
	// Committed are the runs its job.commit() published before it ended:
	// their output and bookmarks are in.
	Committed []string
	// Began says whether it began a run (job.init()) at all.
	Began bool
}

// ExitCode is the exit code `tidemark glue run` exits with: the script's
// own (so its exit 2 or 3 stays what it said), 1 when it was killed.
func (e *ScriptError) ExitCode() int {
	if e.Code <= 0 || e.Code > 125 {
		return 1
	}
	return e.Code
}

func (e *ScriptError) Error() string {
	how := fmt.Sprintf("exited with code %d", e.Code)
	if e.Signal != "" {
		how = "was killed by " + e.Signal
	}
	if len(e.Committed) > 0 {
		return fmt.Sprintf("script %s %s after job.commit() published run %s (its output and bookmark are in); "+
			"nothing it wrote after that was published", e.Script, how, strings.Join(e.Committed, ", "))
	}
	if !e.Began {
		return fmt.Sprintf("script %s %s before it began a run (job.init()); nothing was read or published", e.Script, how)
	}
	if e.Signal != "" {
		return fmt.Sprintf("script %s %s; nothing it wrote was published", e.Script, how)
	}
	return fmt.Sprintf("script %s %s; nothing it wrote after its last job.commit() was published", e.Script, how)
}

// Launch runs a Glue-style script: it serves the bookmark API on a
// loopback port for it, puts tidemark's awsglue package on its
// PYTHONPATH, runs it with Python, and aborts what it left open. The
// script learns where the API is from TIDEMARK_GLUE_URL and
// TIDEMARK_GLUE_TOKEN.
func Launch(ctx context.Context, o LaunchOptions) error {
	script, err := filepath.Abs(o.Script)
	if err != nil {
		return err
	}
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("%w: script: %v", tidemark.ErrUsage, err)
	}
	python := o.Python
	if python == "" {
		python = os.Getenv("TIDEMARK_PYTHON")
	}
	if python == "" {
		python = "python3"
	}
	if _, err := exec.LookPath(python); err != nil {
		return fmt.Errorf("%w: finding the Python to run the script with: %v; install Python 3 and pyspark "+
			"(python3 -m venv VENV && VENV/bin/pip install 'pyspark==%s') and name it with --python or $TIDEMARK_PYTHON",
			tidemark.ErrUsage, err, PySpark)
	}
	pkg, err := Package()
	if err != nil {
		return err
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	sv := &Server{State: o.State, Dir: filepath.Dir(script), Token: token, HostID: o.HostID, LeaseTTL: o.LeaseTTL, Log: o.Log}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the bookmark API: %w", err)
	}
	hs := &http.Server{Handler: sv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	if o.Summary != nil {
		defer func() {
			for _, out := range sv.Outcomes() {
				o.Summary(out.Result, out.Err)
			}
		}()
	}

	cmd := exec.CommandContext(ctx, python, append([]string{"-m", "awsglue._launch", script}, o.Args...)...)
	cmd.Dir = filepath.Dir(script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.Env = append(os.Environ(),
		"TIDEMARK_GLUE_URL=http://"+ln.Addr().String(),
		"TIDEMARK_GLUE_TOKEN="+token,
		"PYTHONPATH="+joinPath(pkg, os.Getenv("PYTHONPATH")))
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", python, err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	werr := cmd.Wait()
	signal.Stop(sigs)
	close(sigs)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	// A request the script made just before it died (a job.commit()) is
	// answered before its outcome is read.
	_ = hs.Shutdown(actx)
	open := sv.Open()
	if werr != nil {
		sv.Close(actx, "the script failed before job.commit(); nothing it wrote was published")
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			se := &ScriptError{Script: o.Script, Code: ee.ExitCode(), Committed: sv.committed(), Began: sv.began()}
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				se.Signal = ws.Signal().String()
			}
			return se
		}
		return fmt.Errorf("running %s: %w", o.Script, werr)
	}
	if open {
		sv.Close(actx, ErrNoCommit.Error())
		return ErrNoCommit
	}
	for _, err := range sv.Results() {
		if err != nil {
			return err // the script went on after a failed commit
		}
	}
	return nil
}

// newToken makes the API's bearer token.
func newToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func joinPath(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + string(os.PathListSeparator) + strings.TrimPrefix(rest, string(os.PathListSeparator))
}
