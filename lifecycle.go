package tidemark

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/store"
)

// The one run lifecycle. Run, a Session and Bookmarks each begin, settle
// and end a run through these steps, in this order:
//
//  1. begin: take the job's lease, mark runs whose holder died failed,
//     resolve a pause run's range, run the checks that refuse a run
//     before it is recorded (a refused run is no run: a usage or
//     job-file error, exit 2), record the run, tell the observer;
//  2. recover: roll committed runs forward and delete what dead runs
//     left (a failure here fails the recorded run);
//  3. settle (runner.settle, execute.go): count, stage and commit;
//  4. end: record a failure first (a barrier: a commit still in flight
//     cannot apply to a failed run), then discard what the run staged.
//
// A Session's program declares its sources and sinks as it goes, so its
// begin is split: it takes the lease (take) and recovers when it starts,
// runs each declaration's checks in Run's order when it is declared, and
// records the run (record) at its first sink, at Commit, or when it fails
// otherwise than refused. What is declared before the first sink is thus
// refused as a job file's mistake is, with nothing recorded.

// begin is step 1. cancel, if set, is called with the cause when the
// lease is lost. On error nothing was recorded; the lease, if taken, is
// r.lease and the caller releases it.
func (r *runner) begin(ctx context.Context, started time.Time, cancel context.CancelCauseFunc, checks func(context.Context) error) error {
	if err := r.take(ctx, started, cancel); err != nil {
		return err
	}
	if checks != nil {
		if err := checks(ctx); err != nil {
			return r.lostDuring(ctx, err)
		}
	}
	return r.record(ctx)
}

// take is begin up to its checks: the lease, the dead runs marked failed,
// a pause run's range resolved. A session takes at its start and records
// when its program has declared what it reads (Session.record).
func (r *runner) take(ctx context.Context, started time.Time, cancel context.CancelCauseFunc) error {
	lease, err := acquire(ctx, r.st, r.job, holderFor(r.rec.RunID, r.opts.HostID, started), r.opts.LeaseTTL, cancel, r.log)
	if err != nil {
		return err
	}
	r.lease = lease
	if err := markDead(ctx, r.st, r.job, lease.token(), r.log); err != nil {
		return err
	}
	// A usage error is found before the run is recorded: it is no run.
	if r.opts.From != "" {
		if r.rangeIDs, err = rangeRuns(ctx, r.st, r.job, r.opts.From, r.opts.To); err != nil {
			return err
		}
	}
	return nil
}

// record is begin's end, once its checks passed: the run recorded as
// running, the observer told.
func (r *runner) record(ctx context.Context) error {
	var err error
	if r.rec, err = r.st.BeginRun(ctx, r.lease.token(), r.rec); err != nil {
		return fmt.Errorf("recording run start: %w", err)
	}
	// A store may return the empty counts as nil maps.
	if r.rec.Sources == nil {
		r.rec.Sources = map[string]store.Count{}
	}
	if r.rec.Sinks == nil {
		r.rec.Sinks = map[string]store.Count{}
	}
	r.first = r.rec
	r.observeStart(ctx)
	return nil
}

// lostDuring is err, a check's refusal, unless the run lost its lease while
// checking: then another run took the job over (a host stopped past its
// lease, say) and may have claimed a sink for its own run, not yet
// recorded, which this run's check took for another job's claim. That is
// a lost lease (exit 1), not a job-file mistake (exit 2), and it says so.
func (r *runner) lostDuring(ctx context.Context, err error) error {
	if isLeaseLost(err) {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && isLeaseLost(cause) {
		return fmt.Errorf("%w (while checking the run: %v)", cause, err)
	}
	if lerr := r.lease.confirm(context.WithoutCancel(ctx)); isLeaseLost(lerr) {
		return fmt.Errorf("job %s: %w (while checking the run: %v)", r.job, store.ErrLeaseLost, err)
	}
	return err
}

// recover is step 2: it finishes what earlier runs left: it rolls
// committed runs forward and deletes what dead runs staged, in the run's
// sinks and in the spill folder.
func (r *runner) recover(ctx context.Context) error {
	if err := recoverJob(ctx, r.st, r.job, r.lease.token(), r.sinks, r.log, nil); err != nil {
		return fmt.Errorf("recovering earlier runs: %w", err)
	}
	r.cleanDeadTemp()
	return nil
}

// fail is step 4 for a recorded run that failed with err: it records the
// failure, then deletes what the run staged and its temporary folders,
// unless its commit may have applied (a failure that could not be
// recorded on a run the store says succeeded, or cannot say), whose
// staged output the next run publishes. An *UnpublishedError is a
// committed run: its record stays succeeded, its publish pending.
func (r *runner) fail(ctx context.Context, err error) {
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer fcancel()
	var unpublished *UnpublishedError
	if !errors.As(err, &unpublished) { // committed: its record stays succeeded, its publish pending
		r.rec.Status, r.rec.Error = store.StatusFailed, secret.Redact(err.Error())
		if ferr := r.st.FailRun(fctx, r.job, r.lease.token(), r.rec.RunID, r.opts.now().UTC(), r.rec, r.rec.Error); ferr != nil {
			// When the failure could not be recorded, a commit that did
			// apply keeps its staged output.
			r.log.Error("recording run failure", "run", r.rec.RunID, "err", ferr)
			if run, rerr := r.st.Run(fctx, r.job, r.rec.RunID); rerr != nil || run.Status == store.StatusSucceeded {
				r.stagings = nil
			}
		}
	}
	r.cleanupTemp()
}
