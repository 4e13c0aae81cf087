package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// measured is one timed process.
type measured struct {
	Start    time.Time // when the process was started
	Wall     time.Duration
	PeakRSS  int64         // bytes (the child's ru_maxrss)
	CPU      time.Duration // user + system time of the process
	Stdout   []byte
	Stderr   string // tail, for messages
	ExitCode int
	TimedOut bool
	// OtherLoad is the CPU, in cores, that other processes used meanwhile:
	// a measurement taken while someone else builds is noise.
	OtherLoad float64
	// ServerCPU is the CPU time the servers serving the process (a
	// database, versitygw; runSpec.Servers) used meanwhile: part of the
	// work measured, not a disturbance.
	ServerCPU time.Duration
	Err       error // nil when the process exited 0 within the time limit
}

// ok reports whether the process finished and exited 0.
func (m measured) ok() bool { return m.Err == nil }

// status is a short word for a table: "ok", "did not finish" or "exit N".
func (m measured) status() string {
	switch {
	case m.TimedOut:
		return "did not finish"
	case m.Err == nil:
		return "ok"
	case m.ExitCode > 0:
		return fmt.Sprintf("exit %d", m.ExitCode)
	}
	return "error"
}

// runSpec describes a process to time.
type runSpec struct {
	Name    string
	Args    []string
	Dir     string
	Env     []string // added to the harness's environment
	Timeout time.Duration
	// Settle, when positive, waits up to this long for a quiet machine first.
	Settle time.Duration
	// StderrFile, when set, also keeps the whole stderr there.
	StderrFile string
	// StdoutFile, when set, receives stdout instead of measured.Stdout.
	StdoutFile string
	// Servers, when set, is the CPU time used so far by the servers the
	// process talks to; what they use during the measurement is not
	// counted as other processes' load.
	Servers func() time.Duration
}

// timeProcess runs one process and measures its wall time and peak RSS.
// The process runs in its own process group; on timeout the whole group is
// killed, so a stuck run cannot outlive the harness's cap.
func timeProcess(ctx context.Context, rs runSpec) measured {
	if rs.Settle > 0 {
		settle(ctx, rs.Settle)
	}
	if rs.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rs.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, rs.Name, rs.Args...)
	cmd.Dir = rs.Dir
	cmd.Env = append(os.Environ(), rs.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 10 * time.Second
	var stdout bytes.Buffer
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if rs.StdoutFile != "" {
		f, err := os.Create(rs.StdoutFile)
		if err != nil {
			return measured{Err: err}
		}
		defer f.Close()
		cmd.Stdout = f
	}
	if rs.StderrFile != "" {
		f, err := os.Create(rs.StderrFile)
		if err == nil {
			defer f.Close()
			cmd.Stderr = io.MultiWriter(stderr, f)
		}
	}

	serverCPU := func() time.Duration { return 0 }
	if rs.Servers != nil {
		serverCPU = rs.Servers
	}
	busy0, server0 := cpuBusy(), serverCPU()
	start := time.Now()
	err := cmd.Run()
	m := measured{Start: start, Wall: time.Since(start), Stdout: stdout.Bytes(), Stderr: strings.TrimSpace(stderr.String())}
	// /proc/stat counts in 10 ms ticks: over a short run one tick of
	// someone else's work would read as a busy core, so the others' load
	// is taken over a window of at least minLoadWindow.
	if m.Wall < minLoadWindow {
		time.Sleep(minLoadWindow - m.Wall)
	}
	window := time.Since(start)
	busy1 := cpuBusy()
	m.ServerCPU = max(0, serverCPU()-server0)
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			m.PeakRSS = ru.Maxrss * 1024 // Linux reports kilobytes
		}
		m.ExitCode = cmd.ProcessState.ExitCode()
		m.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		m.OtherLoad = otherLoad(busy0, busy1, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime()+m.ServerCPU, window)
	}
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		m.TimedOut = true
		m.Err = fmt.Errorf("%s did not finish within %s", rs.Name, rs.Timeout)
		return m
	}
	if err != nil {
		m.Err = fmt.Errorf("%s: %w; stderr ends: %s", filepath.Base(rs.Name), err, lastLines(m.Stderr, 6))
	}
	return m
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if len(t.buf) > t.max {
		return string(t.buf[len(t.buf)-t.max:])
	}
	return string(t.buf)
}
