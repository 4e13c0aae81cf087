package tidemark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// runner is one run in progress. It works only through the source, sink,
// engine and store contracts.
type runner struct {
	spec  *job.Spec
	opts  RunOptions
	st    store.Store
	job   string
	log   *slog.Logger
	lease *heldLease
	rec   store.Run
	// rangeIDs are the runs (from, to] a pause run re-reads, resolved
	// before the run is recorded.
	rangeIDs []string

	sources   []source.Source // opened, one per job-file source
	sinks     []sink.Sink     // opened, one per job-file sink
	plans     []source.Plan
	stagings  []sink.Staging // the current execution's, until committed
	tmpDirs   []string       // deleted when the run ends
	stageDirs []string       // the current execution's, deleted with its stagings
	inDir     string         // spill folder of inputs

	// first is the run's first record; batches the records of a run read
	// in batches (batch.go), one per batch begun, the current one last.
	first   store.Run
	batches []store.Run

	baseVersion int64                        // the head when the run began, for the Observer
	schemas     map[string][]bookmark.Column // each source ctx's schema as read, for the Observer

	// A Session's: the URL schemes its program reads itself, and the
	// source ctxs whose state it does not record (Glue's empty
	// transformation_ctx).
	sessionReads []string
	skipState    map[string]bool

	tmpTag string // the state store's part of temporary folder names (tempPrefix)
}

// execute plans every source, runs the engine when there is anything to
// read, stages the output and commits, batch by batch when the run has
// more new files than the job's batch_files (batch.go).
func (r *runner) execute(ctx context.Context) error {
	head, err := r.st.Head(ctx, r.job)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	states, err := r.st.SourceStates(ctx, r.job)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	r.rec.Sources = map[string]store.Count{}
	r.rec.Sinks = map[string]store.Count{}
	var total int64
	budget := r.spec.IO.DiskBudget.Bytes
	now := r.opts.now()
	for _, src := range r.sources {
		prev, has := states[src.Ctx()]
		req := source.Request{Job: r.job, Mode: r.opts.Mode, State: r.st, Catalog: r.st, Prev: prev, HasPrev: has,
			AllowChange: r.opts.AllowSourceChange, Now: now, DiskBudget: max(budget, 1)}
		if r.opts.From != "" {
			req.RangeRuns = r.rangeIDs
		}
		p, err := src.Plan(ctx, req)
		if err != nil {
			return err
		}
		r.plans = append(r.plans, p)
		total += p.Pending()
		budget -= p.Downloads()
		p.Report(r.log)
	}
	fault.At(fault.AfterPlan)

	if total == 0 {
		r.log.Info("nothing new to read")
		for i, p := range r.plans {
			r.rec.Sources[r.sources[i].Ctx()] = p.Count(nil)
		}
		for _, k := range r.sinks {
			r.rec.Sinks[k.Ctx()] = store.Count{}
		}
		return r.commit(ctx, store.Commit{Job: r.job, BaseVersion: head.Version})
	}
	size := r.batchSize()
	if size == 0 {
		_, err := r.executeBatch(ctx, head.Version, states)
		return err
	}
	r.log.Info("reading the run in batches", "files", total, "batch_files", size)
	rest := r.plans
	for k := 1; ; k++ {
		var more bool
		r.plans, rest, more = split(rest, size)
		if k > 1 {
			if err := r.beginBatch(ctx, k); err != nil {
				return err
			}
		}
		c, err := r.executeBatch(ctx, head.Version, states)
		if err != nil {
			return err
		}
		r.batches = append(r.batches, r.rec)
		r.log.Info("batch committed and published", "batch", k, "run", r.rec.RunID, "version", r.rec.Version)
		if !more {
			return nil
		}
		fault.At(fault.AfterBatch)
		if c.Advance {
			head.Version, states = r.rec.Version, c.Sources
		}
	}
}

// executeBatch runs the engine over the current plans, stages the output
// and commits it against the bookmark at version with states; it returns
// the commit it made.
func (r *runner) executeBatch(ctx context.Context, version int64, states map[string]bookmark.SourceState) (store.Commit, error) {
	res, err := r.runEngine(ctx)
	if err != nil {
		return store.Commit{Job: r.job, BaseVersion: version}, err
	}
	return r.settle(ctx, version, states, res, r.opts.Mode.Advances())
}

// settle turns a successful execution (res) of the plans into the commit
// against the bookmark at version with states: every source's count, and
// with advance its next state and input records (but the sources in
// skipState); then it stages every sink's output and commits, and returns
// the commit it made.
func (r *runner) settle(ctx context.Context, version int64, states map[string]bookmark.SourceState, res engine.Result, advance bool) (store.Commit, error) {
	commit := store.Commit{Job: r.job, BaseVersion: version, Advance: advance}
	if commit.Advance {
		commit.Sources = map[string]bookmark.SourceState{}
		for k, v := range states {
			commit.Sources[k] = v
		}
	}
	for i, p := range r.plans {
		name := r.sources[i].Ctx()
		sr := res.Sources[name]
		r.rec.Sources[name] = p.Count(&sr)
		if sr.Schema != nil {
			if r.schemas == nil {
				r.schemas = map[string][]bookmark.Column{}
			}
			r.schemas[name] = sr.Schema
		}
		if !commit.Advance || r.skipState[name] {
			continue
		}
		if a, ok := p.Advance(r.rec.RunID, sr); ok {
			commit.Sources[name] = a.State
			commit.Added = append(commit.Added, a.Added...)
			commit.Superseded = append(commit.Superseded, a.Superseded...)
			commit.Ranges = append(commit.Ranges, a.Ranges...)
		}
	}
	if err := r.stage(ctx, res, &commit); err != nil {
		return commit, err
	}
	fault.At(fault.AfterStage)
	return commit, r.commit(ctx, commit)
}

// stage has every sink stage its output and records it in the commit; the
// first sink that can hold quarantined rows stages them too.
func (r *runner) stage(ctx context.Context, res engine.Result, c *store.Commit) error {
	rejectsDone := false
	for i, stg := range r.stagings {
		name := r.sinks[i].Ctx()
		rejects := !rejectsDone && stg.Rejects() != ""
		rejectsDone = rejectsDone || rejects
		staged, err := stg.Stage(ctx, res.Sinks[name], rejects)
		if err != nil {
			return err
		}
		c.Outputs = append(c.Outputs, staged.Outputs...)
		c.Actions = append(c.Actions, staged.Actions...)
		c.Catalog = c.Catalog.Merge(staged.Catalog)
		r.rec.Sinks[name] = staged.Count
	}
	return nil
}

// commit makes the run durable and publishes it.
func (r *runner) commit(ctx context.Context, c store.Commit) error {
	c.Token = r.lease.token()
	r.rec.Status = store.StatusSucceeded
	r.rec.FinishedAt = r.opts.now().UTC()
	c.Run = r.rec
	newHead, err := r.st.Commit(ctx, c)
	if err != nil {
		head, applied, oerr := commitOutcome(ctx, r.st, c, err)
		switch {
		case oerr != nil:
			// Committed or not: the staged output is the manifest's if it
			// did, a dead run's leftovers if not; the next run decides.
			r.stagings = nil
			return oerr
		case !applied:
			return fmt.Errorf("committing run %s: %w", r.rec.RunID, err)
		}
		r.log.Warn("the commit returned an error but had applied (read back from the run record)",
			"run", r.rec.RunID, "version", head.Version, "err", err)
		newHead = head
	}
	r.rec.Version = newHead.Version
	r.stagings = nil // committed: the staged output belongs to the manifest now
	fault.At(fault.AfterCommit)
	if len(c.Outputs) > 0 || len(c.Actions) > 0 {
		if err := r.publishRetrying(ctx); err != nil {
			return r.unpublished(ctx, err)
		}
	}
	r.cleanupTemp()
	return nil
}

// runEngine executes the plan. An input that went missing or changed
// while it was read is dropped from its plan (and left unrecorded) by its
// source, and the engine is run again without it, a bounded number of
// times.
func (r *runner) runEngine(ctx context.Context) (engine.Result, error) {
	_, progress := r.opts.Progress.(EngineProgress)
	eng, err := engine.Open(r.spec.Engine, engine.Env{Progress: progress})
	if err != nil {
		return engine.Result{}, err
	}
	defer eng.Close()
	for attempt := 1; ; attempt++ {
		res, retry, err := r.executeOnce(ctx, eng, attempt == source.MaxAttempts)
		if !retry {
			return res, err
		}
		r.discardStaging()
	}
}

// errChangedWhileRead fails an execution whose inputs changed while the
// engine read them; the run executes again without them.
var errChangedWhileRead = errors.New("input files changed while they were read")

// executeOnce readies the inputs and the sinks' staging areas and runs the
// engine once. retry reports that sources dropped inputs that changed or
// vanished meanwhile: then the result is void.
func (r *runner) executeOnce(ctx context.Context, eng engine.Engine, last bool) (engine.Result, bool, error) {
	policy := r.badRecordPolicy()
	plan := engine.Plan{OnBadRecord: policy}
	env := source.Env{Caps: eng.Capabilities(), Policy: policy, TempDir: r.inputDir,
		Concurrency: r.spec.IO.Concurrency, Log: r.log}
	if r.opts.Progress != nil {
		env.Progress = r.opts.Progress
	}
	var reads []source.Reading
	abandon := func(err error) (engine.Result, bool, error) {
		for _, rd := range reads {
			_, _ = rd.Done(ctx, err, engine.SourceResult{}, true)
		}
		return engine.Result{}, false, err
	}
	for _, p := range r.plans {
		rd, err := p.Open(ctx, env)
		if err != nil {
			return abandon(err)
		}
		reads = append(reads, rd)
		plan.Sources = append(plan.Sources, rd.Input())
	}
	for _, t := range r.spec.Transforms {
		plan.Transforms = append(plan.Transforms, engine.Transform{Name: t.Key.(string), SQL: t.Value.(string)})
	}
	run := sink.Run{ID: r.rec.RunID, TempDir: r.stageDir, Concurrency: r.spec.IO.Concurrency, Engine: env.Caps, Log: r.log,
		Catalog: r.st}
	if r.opts.Progress != nil {
		run.Progress = r.opts.Progress
	}
	r.stagings = nil
	for _, k := range r.sinks {
		stg, err := k.Prepare(ctx, run)
		if err != nil {
			return abandon(err)
		}
		r.stagings = append(r.stagings, stg)
		plan.Sinks = append(plan.Sinks, stg.Target())
		if plan.Rejects == "" {
			plan.Rejects = stg.Rejects()
		}
	}
	if r.opts.Progress != nil {
		var files, bytes int64
		for _, p := range r.plans {
			f, b := p.Size()
			files, bytes = files+f, bytes+b
		}
		r.opts.Progress.Phase(fmt.Sprintf("processing %d files (%s)", files, humanize.IBytes(uint64(bytes))), files, 0)
		defer r.opts.Progress.Done()
		ep, ok1 := r.opts.Progress.(EngineProgress)
		pe, ok2 := eng.(engine.Progresser)
		if ok1 && ok2 {
			defer watchEngine(pe, ep)()
		}
	}
	for _, stg := range r.stagings {
		stg.EngineStarted(ctx)
	}
	res, err := eng.Execute(ctx, plan)
	retry := false
	var causes []error
	for i, rd := range reads {
		again, cause := rd.Done(ctx, err, res.Sources[r.sources[i].Ctx()], last)
		retry = retry || again
		if cause != nil {
			causes = append(causes, cause)
		}
	}
	switch {
	case retry:
		err = errChangedWhileRead
	case len(causes) > 0:
		err = errors.Join(causes...) // the sources' failures cause the engine's
	}
	for _, stg := range r.stagings {
		stg.EngineReturned(ctx, err)
	}
	if err != nil {
		return engine.Result{}, retry, err
	}
	return res, false, nil
}

// engineTick is how often the engine's progress is shown.
const engineTick = 200 * time.Millisecond

// watchEngine passes the engine's progress to p until the returned
// function is called; that function returns once the watcher stopped.
func watchEngine(e engine.Progresser, p EngineProgress) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(engineTick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if pr, ok := e.Progress(); ok {
					p.Engine(pr.Percent, pr.Rows)
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}

// badRecordPolicy is the run's policy for bad records: the most lenient of
// its sources'.
func (r *runner) badRecordPolicy() string {
	policy := ""
	for _, p := range r.plans {
		policy = mergeBadRecord(policy, p.BadRecords())
	}
	return policy
}

// mergeBadRecord combines sources' on_bad_record into the plan's one
// policy: the strictest wins.
func mergeBadRecord(cur, src string) string {
	switch {
	case cur == "" || cur == src:
		return src
	case cur == engine.BadFail || src == engine.BadFail:
		return engine.BadFail
	}
	return engine.BadQuarantine
}

func (r *runner) spillDir() string {
	if s, ok := r.spec.Engine.Config.(job.SpillFolderer); ok {
		return s.SpillFolder()
	}
	return ""
}

// inputDir is the run's spill folder for inputs, made on first use.
func (r *runner) inputDir() (string, error) {
	if r.inDir != "" {
		return r.inDir, nil
	}
	dir, err := os.MkdirTemp(r.spillDir(), r.tempPrefix()+"in-")
	if err != nil {
		return "", fmt.Errorf("making spill folder: %w", err)
	}
	r.inDir = dir
	r.tmpDirs = append(r.tmpDirs, dir)
	return dir, nil
}

// stageDir makes a temporary folder for a sink's staging area of the
// current execution.
func (r *runner) stageDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp(r.spillDir(), r.tempPrefix()+pattern)
	if err != nil {
		return "", err
	}
	r.stageDirs = append(r.stageDirs, dir)
	return dir, nil
}

// discardStaging deletes the current execution's staged output (a failed
// execution publishes nothing).
func (r *runner) discardStaging() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, stg := range r.stagings {
		stg.Discard(ctx)
	}
	r.stagings = nil
	for _, d := range r.stageDirs {
		_ = os.RemoveAll(d)
	}
	r.stageDirs = nil
}

// cleanupTemp deletes the run's temporary folders.
func (r *runner) cleanupTemp() {
	r.discardStaging()
	for _, d := range r.tmpDirs {
		_ = os.RemoveAll(d)
	}
	r.tmpDirs, r.inDir = nil, ""
}

// tempPrefix names this job's temporary folders in the spill folder, so the
// next run of the job (which holds the lease) can delete what a killed run
// left there.
func (r *runner) tempPrefix() string {
	if r.tmpTag == "" {
		// The state store's id is in the name: another job of the same name
		// with its own state (another project on this host) is not this
		// job, and its temporary files are not this job's to delete.
		r.tmpTag = "-"
		if id, err := r.st.Identity(context.Background()); err == nil && id.ID != "" {
			sum := sha256.Sum256([]byte(id.ID))
			r.tmpTag = hex.EncodeToString(sum[:4])
		}
	}
	return "tidemark_" + r.job + "@" + r.tmpTag + "@"
}

// cleanDeadTemp deletes temporary folders that earlier, dead runs of the job
// left in the spill folder.
func (r *runner) cleanDeadTemp() {
	dir := r.spillDir()
	if dir == "" {
		dir = os.TempDir()
	}
	// Names are compared, not globbed: a job name from code (a Session's)
	// is not held to job:'s rule, and one with * or ? must not match
	// other jobs' folders.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), r.tempPrefix()) {
			d := filepath.Join(dir, e.Name())
			r.log.Info("deleting temporary files of a run that died", "path", d)
			_ = os.RemoveAll(d)
		}
	}
}
