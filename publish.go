package tidemark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// publish makes a committed run's output visible: every location it
// staged output for (or has an action at) publishes its part, then the run
// is marked published. Every step is idempotent, so a run killed anywhere
// in here is finished by the next command that calls publish again.
func publish(ctx context.Context, st store.Store, jobName string, token int64, runID string, log *slog.Logger) error {
	outs, err := st.Outputs(ctx, jobName, runID)
	if err != nil {
		return fmt.Errorf("reading outputs of run %s: %w", runID, err)
	}
	acts, err := st.Actions(ctx, jobName, runID)
	if err != nil {
		return fmt.Errorf("reading actions of run %s: %w", runID, err)
	}
	run, err := st.Run(ctx, jobName, runID)
	if err != nil {
		return fmt.Errorf("reading run %s: %w", runID, err)
	}
	type place struct {
		first   store.Output // names the location (and its kind)
		outputs []store.Output
		actions []store.SinkAction
	}
	places := map[string]*place{}
	at := func(key string, o store.Output) *place {
		p, ok := places[key]
		if !ok {
			p = &place{first: o}
			places[key] = p
		}
		return p
	}
	for _, o := range outs {
		p := at(sink.LocationKey(o), o)
		p.outputs = append(p.outputs, o)
	}
	for _, a := range acts {
		p := at(a.Root, store.Output{RunID: runID, Sink: a.Sink, Kind: manifest.File, Root: a.Root})
		p.actions = append(p.actions, a)
	}
	keys := make([]string, 0, len(places))
	for k := range places {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var locs []sink.Location
	defer func() {
		for _, l := range locs {
			_ = l.Close()
		}
	}()
	for _, k := range keys {
		p := places[k]
		loc, err := sink.OpenLocation(ctx, p.first)
		if err != nil {
			return err
		}
		locs = append(locs, loc)
		err = loc.Publish(ctx, sink.Publication{Job: jobName, RunID: runID, Run: run, Outputs: p.outputs,
			Actions: p.actions, State: st, Log: log})
		if errors.Is(err, sink.ErrOutputLost) {
			return fmt.Errorf("%w; %s", err, rereadHint(ctx, st, jobName, runID))
		}
		if err != nil {
			return err
		}
	}
	fault.At(fault.AfterPublish)
	if err := st.MarkPublished(ctx, jobName, token, runID); err != nil {
		return fmt.Errorf("marking run %s published: %w", runID, err)
	}
	for _, l := range locs {
		l.Published(ctx, runID, log)
	}
	return nil
}

// publishAttempts and publishBackoff bound the retries of a committed run's
// publish: every step is idempotent, so it is worth trying hard before
// leaving the roll-forward to the next command.
var (
	publishAttempts = 5
	publishBackoff  = time.Second
)

func (r *runner) publishRetrying(ctx context.Context) error {
	var err error
	wait := publishBackoff
	for attempt := 1; attempt <= publishAttempts; attempt++ {
		if err = publish(ctx, r.st, r.job, r.lease.token(), r.rec.RunID, r.log); err == nil {
			return nil
		}
		var owned *sink.OwnedError
		if attempt == publishAttempts || ctx.Err() != nil || errors.As(err, &owned) {
			break // a location handed over stays so: no retry
		}
		r.log.Warn("publishing committed run; retrying", "run", r.rec.RunID, "attempt", attempt, "in", wait, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait *= 2
	}
	return err
}

// UnpublishedError is a run that committed but could not publish all its
// output: the bookmark moved, the output is complete in staging, and the
// next run (or bookmark reset) publishes it before doing anything else.
type UnpublishedError struct {
	RunID string
	Err   error
	// PublishedBy is set when the state store marks the run published
	// after all: another run of the job rolled it forward (this one lost
	// its lease while publishing). It says who holds the lease now.
	PublishedBy string
}

func (e *UnpublishedError) Error() string {
	var owned *sink.OwnedError
	if errors.As(e.Err, &owned) {
		return fmt.Sprintf("run %s committed but was not published: %v", e.RunID, e.Err)
	}
	if e.PublishedBy != "" {
		return fmt.Sprintf("run %s committed and its output is published, though not by this process: publishing it here "+
			"ended with: %v; the state store marks it published (%s rolled it forward). Nothing is left to do for it",
			e.RunID, e.Err, e.PublishedBy)
	}
	return fmt.Sprintf("run %s committed but publishing its output failed: %v; "+
		"the output is staged and the next `tidemark run` (or `bookmark reset`) publishes it first", e.RunID, e.Err)
}

func (e *UnpublishedError) Unwrap() error { return e.Err }

// unpublished is the error of a committed run whose publish failed. A run
// that lost its lease meanwhile may have been rolled forward by the run
// that took the lease over: the state store is asked, so that the error
// says what happened to the output.
func (r *runner) unpublished(ctx context.Context, err error) error {
	e := &UnpublishedError{RunID: r.rec.RunID, Err: err}
	var owned *sink.OwnedError
	if errors.As(err, &owned) {
		return e
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	pending, perr := r.st.Unpublished(cctx, r.job)
	if perr != nil {
		return e
	}
	for _, p := range pending {
		if p.RunID == e.RunID {
			return e
		}
	}
	e.PublishedBy = "another run of the job"
	if lr, ok := r.st.(store.LeaseReader); ok {
		if l, held, lerr := lr.CurrentLease(cctx, r.job); lerr == nil && held && l.Token != r.lease.token() {
			e.PublishedBy = fmt.Sprintf("run %s on host %s, which holds the job's lease now,", l.Holder.ID, l.Holder.Host)
		}
	}
	return e
}

// rereadHint says how to read a lost run's input again: rewind the
// bookmark to the enable run before it, purging what the lost run
// published in part.
func rereadHint(ctx context.Context, st store.Store, jobName, runID string) string {
	reset := fmt.Sprintf("tidemark bookmark reset %s --purge-output", jobName)
	unknown := "rewind the bookmark to the run before it with --purge-output (tidemark bookmark reset " + jobName + " --to-run RUN --purge-output) so that its input is read again"
	none := "no earlier run to rewind to: clear the bookmark so that all input is read again: " + reset
	lost, err := st.Run(ctx, jobName, runID)
	if errors.Is(err, store.ErrNotFound) {
		return none
	}
	if err != nil {
		return unknown
	}
	for r, err := range store.EachRun(ctx, st, jobName, lost.Seq, hintPage) { // newest first, before the lost run
		if err != nil {
			return unknown
		}
		if r.Mode == bookmark.ModeEnable && r.Status == store.StatusSucceeded && !r.Undone {
			return fmt.Sprintf("rewind the bookmark to the run before it so that its input is read again: "+
				"tidemark bookmark reset %s --to-run %s --purge-output (or clear it: %s)", jobName, r.RunID, reset)
		}
	}
	return none
}

// hintPage and deadPage are the page sizes of rereadHint's and markDead's
// walks back through the runs: each stops at the first run it looks for,
// most often within the newest few.
const (
	hintPage = 20
	deadPage = 20
)

// recoverJob finishes what earlier runs of the job left behind: committed
// runs not yet published are rolled forward, oldest first; then each of
// the given sinks deletes what the job's runs that never committed staged
// or began to upload there (only those runs': the state store names them).
//
// undone, when set, names the committed runs a reset is about to undo: one
// of them whose output can no longer be published (sink.ErrOutputLost: its
// staged files or uploads are gone) is given up, marked published with a
// warning, instead of failing the reset that reads its input again.
func recoverJob(ctx context.Context, st store.Store, jobName string, token int64, sinks []sink.Sink, log *slog.Logger, undone func(store.Run) bool) error {
	pending, err := st.Unpublished(ctx, jobName)
	if err != nil {
		return fmt.Errorf("finding unpublished runs: %w", err)
	}
	for _, r := range pending {
		log.Info("rolling forward committed run", "run", r.RunID)
		err := publish(ctx, st, jobName, token, r.RunID, log)
		if err != nil && errors.Is(err, sink.ErrOutputLost) && undone != nil && undone(r) {
			log.Warn("giving up the output of a run being undone: its staged files or uploads are gone; what of it was published is "+
				"deleted by --purge-output", "run", r.RunID, "err", err)
			err = st.MarkPublished(ctx, jobName, token, r.RunID)
		}
		if err != nil {
			return err
		}
	}
	// Every committed run is published by now and the caller holds the
	// job's lease, so what the job's runs (but the one running) left
	// staged or half-uploaded is dead. Other runs' files are not the job's
	// to delete, whatever their names.
	dead := deadRuns(ctx, st, jobName)
	for _, k := range sinks {
		if err := k.Cleanup(ctx, dead, log); err != nil {
			return err
		}
	}
	return nil
}

// deadRuns reports whether a run of the job that left something in a sink
// is dead: recorded and no longer running (the caller holds the lease and
// has rolled every committed run forward). A run the store does not know
// is not the job's.
func deadRuns(ctx context.Context, st store.Store, jobName string) func(runID string) (bool, error) {
	return func(runID string) (bool, error) {
		r, err := st.Run(ctx, jobName, runID)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return r.Status != store.StatusRunning, nil
	}
}

// markDead records as failed the runs that died before they committed
// (killed, crashed): the caller holds the lease, so no other run of the job
// is alive. Runs are scanned newest first down to the last succeeded one,
// which had marked any older ones.
func markDead(ctx context.Context, st store.Store, jobName string, token int64, log *slog.Logger) error {
	// Nearly always the newest run succeeded: one record tells, not a
	// page of them (on S3 each record is a request).
	newest, err := st.Runs(ctx, jobName, store.RunQuery{Limit: 1})
	if err != nil {
		return fmt.Errorf("reading runs: %w", err)
	}
	if len(newest) == 0 || newest[0].Status == store.StatusSucceeded {
		return nil
	}
	for r, err := range store.EachRun(ctx, st, jobName, 0, deadPage) {
		if err != nil {
			return fmt.Errorf("reading runs: %w", err)
		}
		if r.Status == store.StatusSucceeded {
			break
		}
		if r.Status != store.StatusRunning {
			continue
		}
		log.Info("marking a run that died before committing as failed", "run", r.RunID)
		if err := st.FailRun(ctx, jobName, token, r.RunID, time.Now().UTC(), r, "the run died before it committed (killed or crashed); nothing of it was published"); err != nil {
			return fmt.Errorf("marking run %s failed: %w", r.RunID, err)
		}
	}
	return nil
}
