package sqlite

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// openHelperEnv makes the test binary act as one process opening a new
// state file at the same moment as others.
const openHelperEnv = "TIDEMARK_SQLITE_OPEN_HELPER_DB"

// TestOpenHelperProcess is not a test: run by TestProcessesOpenRace in a
// child process, it waits for its stdin to close, opens the store and
// prints "ok" or the error.
func TestOpenHelperProcess(t *testing.T) {
	path := os.Getenv(openHelperEnv)
	if path == "" {
		t.Skip("helper process for TestProcessesOpenRace")
	}
	io.Copy(io.Discard, os.Stdin)
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(0)
	}
	s.Close()
	fmt.Println("ok")
	os.Exit(0)
}

// TestProcessesOpenRace has several processes create and open one new state
// file at the same instant, round after round: every open succeeds, none
// reports "database is locked".
func TestProcessesOpenRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const n, rounds = 6, 15
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "state.db")
		cmds := make([]*exec.Cmd, n)
		outs := make([]*strings.Builder, n)
		stdins := make([]io.WriteCloser, n)
		for i := range cmds {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpenHelperProcess$")
			cmd.Env = append(os.Environ(), openHelperEnv+"="+path)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = new(strings.Builder)
			cmd.Stdout, cmd.Stderr = outs[i], outs[i]
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i], stdins[i] = cmd, stdin
		}
		for _, s := range stdins {
			s.Close()
		}
		for i, cmd := range cmds {
			cmd.Wait()
			if out := strings.TrimSpace(outs[i].String()); !strings.HasPrefix(out, "ok") {
				t.Errorf("round %d, process %d: %s", round, i, out)
			}
		}
	}
}
