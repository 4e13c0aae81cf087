package tidemark

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
	"github.com/tidemark-etl/tidemark/store/memory"
)

// TestCheckRefusedAfterLeaseLost: a run whose lease another run took while
// it checked (a host stopped past its lease TTL, then resumed) finds the
// taker's claim on its sink, made for a run not recorded yet. Its refusal
// is a lost lease (exit 1), not the job-file mistake a sink of another job
// is (exit 2), and nothing of the run is recorded.
func TestCheckRefusedAfterLeaseLost(t *testing.T) {
	ctx := context.Background()
	st := memory.New(memory.Options{Name: t.Name()})
	const jobName = "j"
	started := time.Now().UTC()
	r := &runner{spec: &job.Spec{Job: jobName}, st: st, job: jobName, log: slog.New(slog.DiscardHandler),
		opts: RunOptions{Mode: bookmark.ModeEnable, HostID: "a", LeaseTTL: time.Hour, Logger: slog.New(slog.DiscardHandler)}}
	r.rec = store.Run{Job: jobName, RunID: newRunID(started), Mode: bookmark.ModeEnable, Status: store.StatusRunning, StartedAt: started, Host: "a"}
	owned := &sink.OwnedError{Sink: "out", Location: "/out", Job: jobName}
	err := r.begin(ctx, started, nil, func(ctx context.Context) error {
		// Another host takes the lease over while this one checks.
		if err := st.BreakLease(ctx, jobName, r.lease.token()); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AcquireLease(ctx, jobName, store.Holder{ID: "b", Host: "b"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		return owned
	})
	r.lease.release()
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("begin, the lease taken during the checks: got %v, want a lost lease", err)
	}
	if got := ExitCode(err); got != ExitFailed {
		t.Errorf("exit code %d, want %d (a lost lease, not a refused job file)", got, ExitFailed)
	}
	runs, err := st.Runs(ctx, jobName, store.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 0 {
		t.Errorf("a run refused before it began was recorded: %+v", runs)
	}

	// With the lease still its own, the refusal stays what it was.
	st2 := memory.New(memory.Options{Name: t.Name() + "2"})
	r2 := &runner{spec: r.spec, st: st2, job: jobName, log: r.log, opts: r.opts, rec: r.rec}
	err = r2.begin(ctx, started, nil, func(context.Context) error { return owned })
	r2.lease.release()
	if !errors.Is(err, owned) || ExitCode(err) != ExitUsage {
		t.Errorf("begin, the sink owned and the lease held: got %v (exit %d), want the refusal (exit %d)", err, ExitCode(err), ExitUsage)
	}
}
