package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/store"
)

// TestInstancesShareFile races separate *Store instances (separate
// connection pools, as separate processes have) on one file.
func TestInstancesShareFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const n = 8
	stores := make([]*Store, n)
	for i := range stores {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}

	for round := range 3 {
		leases := make([]store.Lease, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				<-start
				leases[i], errs[i] = s.AcquireLease(t.Context(), "j", store.Holder{ID: fmt.Sprint("p", i)}, leaseTTL)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: instances %d and %d both got the lease", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, store.ErrLeaseHeld):
				t.Errorf("round %d: instance %d: %v, want ErrLeaseHeld", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no instance got the lease", round)
		}
		if err := stores[winner].ReleaseLease(t.Context(), leases[winner]); err != nil {
			t.Fatal(err)
		}
	}

	// A commit through one instance is what another sees, and fences it.
	a, b := stores[0], stores[1]
	l, err := a.AcquireLease(t.Context(), "j", store.Holder{ID: "a"}, leaseTTL)
	if err != nil {
		t.Fatal(err)
	}
	commitFiles(t, a, l, "r1", 0, "x", "y")
	if got := paths(t, b, "j"); !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("other instance sees files %v, want [x y]", got)
	}
	r, err := b.BeginRun(t.Context(), l.Token, store.Run{Job: "j", RunID: "r2"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Commit(t.Context(), store.Commit{Job: "j", Token: l.Token, BaseVersion: 0, Advance: true, Run: r})
	if !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("stale commit through the other instance: %v, want ErrVersionConflict", err)
	}
}

// TestWaitsForWriter holds the write lock from a raw connection for a while:
// AcquireLease must wait for it (busy_timeout), not fail with "database is
// locked".
func TestWaitsForWriter(t *testing.T) {
	s := openTemp(t)
	other, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	const hold = 300 * time.Millisecond
	go func() {
		time.Sleep(hold)
		conn.ExecContext(context.Background(), "COMMIT")
	}()
	start := time.Now()
	if _, err := s.AcquireLease(t.Context(), "j", store.Holder{ID: "a"}, leaseTTL); err != nil {
		t.Fatalf("AcquireLease while another connection writes: %v", err)
	}
	if waited := time.Since(start); waited < hold/2 {
		t.Errorf("AcquireLease returned after %s although the write lock was held for %s", waited, hold)
	}
}

// helperEnv makes the test binary act as one racing tidemark process.
const helperEnv = "TIDEMARK_SQLITE_HELPER_DB"

// TestHelperProcess is not a test: run by TestProcessesRace in a child
// process, it opens the store, waits for its stdin to close, races for the
// lease and prints the outcome.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestProcessesRace")
	}
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(0)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	l, err := s.AcquireLease(ctx, "j", store.Holder{ID: fmt.Sprint("pid-", os.Getpid()), PID: os.Getpid()}, leaseTTL)
	switch {
	case err == nil:
		fmt.Println("won", l.Token)
	case errors.Is(err, store.ErrLeaseHeld):
		fmt.Println("held")
	default:
		fmt.Println("error:", err)
	}
	s.Close()
	os.Exit(0)
}

// TestProcessesRace starts several processes on one new database file (so
// they also race to create and migrate it) and has them race for a lease:
// exactly one wins, the others see ErrLeaseHeld.
func TestProcessesRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const n = 6
	path := filepath.Join(t.TempDir(), "state.db")
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	children := make([]child, n)
	for i := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[i] = child{cmd, stdin, bufio.NewScanner(stdout)}
	}
	for i, c := range children {
		if line := outcome(c.out); line != "ready" {
			t.Fatalf("process %d: %s, want ready", i, line)
		}
	}
	for _, c := range children {
		c.stdin.Close()
	}
	won := 0
	for i, c := range children {
		line := outcome(c.out)
		t.Logf("process %d: %s", i, line)
		switch {
		case strings.HasPrefix(line, "won "):
			won++
		case line == "held":
		default:
			t.Errorf("process %d: %s", i, line)
		}
		for c.out.Scan() {
		}
		c.cmd.Wait()
	}
	if won != 1 {
		t.Errorf("%d of %d processes got the lease, want 1", won, n)
	}
}

// outcome returns the next line the helper process printed for the test,
// skipping anything the testing package printed.
func outcome(s *bufio.Scanner) string {
	for s.Scan() {
		line := s.Text()
		for _, p := range []string{"ready", "won ", "held", "error:"} {
			if strings.HasPrefix(line, p) {
				return line
			}
		}
	}
	return "<no output>"
}
