package sparktest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/internal/syncbuf"
)

// process is a Spark process (a Connect server, a worker) started in a
// process group of its own, so that stopping it stops what it launched.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	log  *syncbuf.Buffer
}

// start starts name with args and the environment plus env; what names it
// in a failure.
func start(tb testing.TB, what, name string, args, env []string) *process {
	tb.Helper()
	p := &process{cmd: exec.Command(name, args...), done: make(chan struct{}), log: &syncbuf.Buffer{}}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", what, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	return p
}

// exited reports whether the process has exited.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill kills the process and what it launched at once (SIGKILL to its
// process group), as when its machine dies.
func (p *process) Kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

// Stop stops the process and what it launched (SIGTERM, then SIGKILL after
// 10 s).
func (p *process) Stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}

// tail is the last 40 lines the process wrote.
func (p *process) tail() string {
	lines := strings.Split(p.log.String(), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
