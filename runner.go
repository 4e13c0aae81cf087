package tidemark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// runner is one run in progress.
type runner struct {
	spec  *job.Spec
	opts  RunOptions
	st    store.Store
	job   string
	log   *slog.Logger
	rs    roots
	lease *heldLease
	rec   store.Run
	// rangeIDs are the runs (from, to] a pause run re-reads, resolved
	// before the run is recorded.
	rangeIDs []string

	plans   []*SourcePlan
	staged  []stagedSink // sinks whose staging folders exist
	tmpDirs []string
	inDir   string // spill folder of remote inputs
	closers []func() error
	uploads []func(context.Context) error
	tails   []*tailUpload // uploads of outputs sent while the engine wrote them

	planned []plannedInputs // what went missing or changed while the plans were read
}

func (r *runner) execute(ctx context.Context) error {
	head, err := r.st.Head(ctx, r.job)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	states, err := r.st.SourceStates(ctx, r.job)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	in := planInput{mode: r.opts.Mode, states: states, allowDrift: r.opts.AllowSourceChange, now: time.Now()}
	if r.opts.From != "" {
		in.rangeRuns = r.rangeIDs
	}
	r.rec.Sources = map[string]store.Count{}
	r.rec.Sinks = map[string]store.Count{}
	var total int64
	budget := r.spec.IO.DiskBudget.Bytes
	for _, src := range r.spec.Sources {
		in.diskBudget = max(budget, 1)
		p, err := planSource(ctx, r.st, r.job, r.spec, src, in)
		if err != nil {
			return err
		}
		r.plans = append(r.plans, p)
		total += p.pending()
		if p.table != nil {
			r.closers = append(r.closers, p.table.src.Close)
			r.logTablePlan(p)
			continue
		}
		if _, local := p.src.objs.LocalPath(""); !local {
			budget -= p.Bytes()
		}
		r.log.Info("planned", "source", p.Ctx, "files", len(p.Take), "bytes", humanize.IBytes(uint64(p.Bytes())),
			"unchanged", p.Unchanged, "modified", p.Modified, "deferred", p.Deferred)
		if p.src.inSinks > 0 {
			r.log.Warn("files in another tidemark sink's folder below the source are not read", "source", p.Ctx,
				"files", p.src.inSinks, "folders", strings.Join(p.src.sinkDirs, ", "))
		}
		if p.IgnoredModified > 0 {
			r.log.Warn("modified files ignored (on_modified: ignore)", "source", p.Ctx, "files", p.IgnoredModified)
		}
		if p.RootMissing {
			r.log.Info("source folder does not exist yet (allow_missing: true): nothing to read", "source", p.Ctx, "path", p.src.location)
		}
		for _, w := range p.Warnings {
			r.log.Warn(w, "source", p.Ctx)
		}
	}
	fault.At(fault.AfterPlan)

	commit := store.Commit{Job: r.job, BaseVersion: head.Version, Advance: r.opts.Mode.Advances() && total > 0}
	if total == 0 {
		r.log.Info("nothing new to read")
		for _, p := range r.plans {
			c := store.Count{Unchanged: p.Unchanged}
			if p.src != nil {
				c.InSinks = p.src.inSinks
			}
			r.rec.Sources[p.Ctx] = c
			if p.table != nil {
				r.rec.Sources[p.Ctx] = p.tableCount()
			}
		}
		for _, k := range r.spec.Sinks {
			r.rec.Sinks[k.Ctx] = store.Count{}
		}
		return r.commit(ctx, commit, head)
	}

	res, plans, err := r.runEngine(ctx, states)
	if err != nil {
		return err
	}
	if commit.Advance {
		commit.Sources = map[string]bookmark.SourceState{}
		for k, v := range states {
			commit.Sources[k] = v
		}
	}
	for i, p := range r.plans {
		sr := res.Sources[p.Ctx]
		if p.table != nil {
			r.rec.Sources[p.Ctx] = p.tableCount()
			if commit.Advance && p.table.ex != nil && p.table.ex.Cursor != nil {
				st, rec := p.tableState(r.rec.RunID)
				commit.Sources[p.Ctx] = st
				commit.Added = append(commit.Added, rec)
			}
			continue
		}
		c := store.Count{Files: int64(len(p.Take)), Bytes: p.Bytes(), Rows: sr.Rows, Rejected: sr.Rejected,
			Modified: p.Modified, Deferred: p.Deferred, Missing: int64(len(plans[i].missing)), Future: p.Future,
			InSinks: p.src.inSinks, ChangedDuringRead: plans[i].changed}
		for _, f := range p.Take {
			if f.Size == 0 {
				c.Empty++
			}
		}
		r.rec.Sources[p.Ctx] = c
		if commit.Advance {
			schema := sr.Schema
			if c.Empty == c.Files {
				schema = nil // nothing was read to infer it from
			}
			commit.Sources[p.Ctx] = p.nextState(schema)
			for _, f := range p.Take {
				commit.Added = append(commit.Added, store.FileRecord{Ctx: p.Ctx, File: f})
			}
			for _, f := range p.Superseded {
				commit.Superseded = append(commit.Superseded, store.FileRecord{Ctx: p.Ctx, File: f})
			}
		}
	}
	if err := r.stageOutputs(ctx, res, &commit); err != nil {
		return err
	}
	fault.At(fault.AfterStage)
	return r.commit(ctx, commit, head)
}

// commit makes the run durable and publishes it.
func (r *runner) commit(ctx context.Context, c store.Commit, head store.Head) error {
	c.Token = r.lease.token()
	r.rec.Status = store.StatusSucceeded
	r.rec.FinishedAt = time.Now().UTC()
	c.Run = r.rec
	newHead, err := r.st.Commit(ctx, c)
	if err != nil {
		return fmt.Errorf("committing run %s: %w", r.rec.RunID, err)
	}
	r.rec.Version = newHead.Version
	r.staged = nil // committed: the staged files belong to the manifest now
	fault.At(fault.AfterCommit)
	if len(c.Outputs) > 0 || len(c.Actions) > 0 {
		if err := r.publishRetrying(ctx); err != nil {
			return &UnpublishedError{RunID: r.rec.RunID, Err: err}
		}
	}
	r.cleanupTemp()
	return nil
}

// plannedInputs is one source's engine input plus what went missing or
// changed while it was read.
type plannedInputs struct {
	missing []string
	changed int64
}

// runEngine executes the plan. A file deleted between planning and reading
// is reported, dropped from the plan and left unrecorded; so is a file that
// changed while it was read (see readcheck.go); the engine is run again
// without them, a bounded number of times.
func (r *runner) runEngine(ctx context.Context, states map[string]bookmark.SourceState) (engine.Result, []plannedInputs, error) {
	_, progress := r.opts.Progress.(EngineProgress)
	eng, err := engine.New(r.spec.Engine.Name, engine.Options{
		MemoryLimit: engineConfig(r.spec).MemoryLimit, Threads: engineConfig(r.spec).Threads,
		SpillDir: r.spillDir(), Progress: progress,
	})
	if err != nil {
		return engine.Result{}, nil, err
	}
	defer eng.Close()
	planned := make([]plannedInputs, len(r.plans))
	r.planned = planned
	for attempt := 1; ; attempt++ {
		ins, err := r.stampInputs(planned)
		if err != nil {
			return engine.Result{}, nil, err
		}
		res, changed, err := r.executeOnce(ctx, eng, states, ins)
		if len(changed) > 0 {
			if attempt == maxReadAttempts {
				return engine.Result{}, nil, changedError(changed, r.plans)
			}
			r.dropChanged(changed, planned)
			r.cleanupStaging()
			continue
		}
		if err == nil {
			return res, planned, nil
		}
		if attempt == maxReadAttempts || !r.dropMissing(ctx, planned) {
			return engine.Result{}, nil, err
		}
		r.cleanupStaging()
	}
}

// errChangedWhileRead fails an execution whose local inputs changed while
// the engine read them; the caller drops them and runs again.
var errChangedWhileRead = errors.New("input files changed while they were read")

// executeOnce fetches the inputs and runs the engine once, checking the
// compressed inputs alongside it. It returns the local inputs (of ins) that
// changed meanwhile; then the result is void.
func (r *runner) executeOnce(ctx context.Context, eng engine.Engine, states map[string]bookmark.SourceState, ins []localInput) (engine.Result, map[int]map[string]bool, error) {
	plan, streams, err := r.enginePlan(ctx, states, r.canStream(eng, r.badRecordPolicy()))
	if err != nil {
		_ = finishStreams(streams, engine.Result{}, err)
		return engine.Result{}, nil, err
	}
	if r.opts.Progress != nil {
		var files, bytes int64
		for _, p := range r.plans {
			files += int64(len(p.Take))
			bytes += p.Bytes()
		}
		r.opts.Progress.Phase(fmt.Sprintf("processing %d files (%s)", files, humanize.IBytes(uint64(bytes))), files, 0)
		defer r.opts.Progress.Done()
		ep, ok1 := r.opts.Progress.(EngineProgress)
		pe, ok2 := eng.(engine.Progresser)
		if ok1 && ok2 {
			defer watchEngine(pe, ep)()
		}
	}
	tails := r.startTails(ctx)
	verified := startVerify(ctx, plan)
	res, err := eng.Execute(ctx, plan)
	bad := verified()
	changed := r.changedInputs(ins)
	switch {
	case len(changed) > 0:
		err = errChangedWhileRead
	case len(bad) > 0:
		err = errors.Join(bad...) // the cause of any failure of the engine on the same input
	}
	engineReturned(tails, err)
	if err := finishStreams(streams, res, err); err != nil {
		for _, t := range tails {
			t.drop(ctx)
		}
		return engine.Result{}, changed, err
	}
	r.tails = tails
	return res, nil, nil
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
// its sources' (a table source's is fail).
func (r *runner) badRecordPolicy() string {
	policy := ""
	for _, src := range r.spec.Sources {
		if src.IsTable() {
			policy = mergeBadRecord(policy, engine.BadFail)
		} else {
			policy = mergeBadRecord(policy, fileConfig(src).OnBadRecord)
		}
	}
	return policy
}

// dropMissing removes planned files that no longer exist; it reports whether
// any was removed.
func (r *runner) dropMissing(ctx context.Context, planned []plannedInputs) bool {
	dropped := false
	for i, p := range r.plans {
		kept := p.Take[:0]
		gone := map[string]bool{}
		for _, f := range p.Take {
			if _, err := p.src.objs.Stat(ctx, f.Path); errors.Is(err, objstore.ErrNotExist) {
				r.log.Warn("input file disappeared after planning; not recorded, will be read if it comes back", "source", p.Ctx, "file", f.Path)
				planned[i].missing = append(planned[i].missing, f.Path)
				gone[f.Path] = true
				dropped = true
				continue
			}
			kept = append(kept, f)
		}
		p.Take = kept
		// A modified file that vanished keeps its old record.
		p.Superseded = slices.DeleteFunc(p.Superseded, func(f bookmark.File) bool { return gone[f.Path] })
	}
	return dropped
}

func (r *runner) spillDir() string {
	if d := engineConfig(r.spec).SpillDir; d != "" {
		return resolvePath(r.spec, d)
	}
	return ""
}

// enginePlan builds the engine's plan: sources with local paths (remote
// inputs are downloaded first), transforms, and sinks with staging folders.
// With stream, a table source's rows reach the engine through a pipe
// while they are read (the streams returned, already started); else they
// are extracted to files first.
func (r *runner) enginePlan(ctx context.Context, states map[string]bookmark.SourceState, stream bool) (engine.Plan, []*tableStream, error) {
	plan := engine.Plan{OnBadRecord: r.badRecordPolicy()}
	var streams []*tableStream
	locals, err := r.fetchInputs(ctx)
	if err != nil {
		return plan, nil, err
	}
	for i, p := range r.plans {
		src := r.spec.Sources[i]
		if p.table != nil {
			dir, err := r.inputDir()
			if err != nil {
				return plan, streams, err
			}
			if stream && p.table.ranges == nil {
				st, err := startStream(ctx, p, filepath.Join(dir, p.Ctx))
				if err != nil {
					return plan, streams, err
				}
				streams = append(streams, st)
				plan.Sources = append(plan.Sources, st.input())
				continue
			}
			ex, err := p.extractTable(ctx, filepath.Join(dir, p.Ctx))
			if err != nil {
				return plan, streams, err
			}
			plan.Sources = append(plan.Sources, tableInput(p.Ctx, ex))
			continue
		}
		fc := fileConfig(src)
		es := engine.Source{Ctx: p.Ctx, Format: fc.Format, Options: fc.Options, Hive: *fc.HivePartitioning}
		if st, ok := states[p.Ctx]; ok && len(st.Schema) > 0 {
			es.Schema = st.Schema
		}
		for j, f := range p.Take {
			es.Files = append(es.Files, engine.Input{Path: locals[i][j], Key: f.Path, Size: f.Size})
		}
		plan.Sources = append(plan.Sources, es)
	}
	for _, t := range r.spec.Transforms {
		plan.Transforms = append(plan.Transforms, engine.Transform{Name: t.Key.(string), SQL: t.Value.(string)})
	}
	r.staged = nil
	for _, k := range r.spec.Sinks {
		ss, err := r.stagingFor(ctx, k)
		if err != nil {
			return plan, streams, err
		}
		r.staged = append(r.staged, ss)
		plan.Sinks = append(plan.Sinks, engine.Sink{Ctx: k.Ctx, From: k.From, Format: ss.cfg.Format, Options: ss.cfg.Options,
			PartitionBy: ss.cfg.PartitionBy, Dir: path.Join(ss.local, "data")})
	}
	for _, ss := range r.staged {
		if ss.table == nil {
			plan.RejectsDir = path.Join(ss.local, "rejects")
			break
		}
	}
	return plan, streams, nil
}

// cleanupStaging deletes this run's staged output (a failed run publishes
// nothing).
func (r *runner) cleanupStaging() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ss := range r.staged {
		if ss.table != nil {
			continue // its staging table is dropped by the next run's recovery
		}
		if err := ss.objs.DeletePrefix(ctx, stagingPrefix(r.rec.RunID)); err != nil {
			r.log.Warn("cleaning staged output", "sink", ss.spec.Ctx, "err", err)
		}
		if a, ok := ss.objs.(objstore.UploadAborter); ok && ss.remote {
			mine := "part-" + r.rec.RunID + "-"
			_, err := a.AbortStaleUploads(ctx, "", 0, func(k string) bool {
				return strings.Contains(k, mine) || strings.HasPrefix(k, stagingPrefix(r.rec.RunID))
			})
			if err != nil {
				r.log.Warn("aborting this run's uploads", "sink", ss.spec.Ctx, "err", err)
			}
		}
		if !ss.remote {
			_ = os.RemoveAll(ss.local)
		}
	}
	r.staged = nil
	r.cleanupTemp()
}

func (r *runner) cleanupTemp() {
	for _, d := range r.tmpDirs {
		_ = os.RemoveAll(d)
	}
	r.tmpDirs = nil
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

// logTablePlan reports a SQL table source's plan, and warns about what a
// data engineer must look at.
func (r *runner) logTablePlan(p *SourcePlan) {
	t := p.table
	for _, n := range t.src.Notes() {
		r.log.Warn(n, "source", p.Ctx)
	}
	if t.plan == nil {
		r.log.Info("planned", "source", p.Ctx, "ranges", len(t.ranges))
		return
	}
	attrs := []any{"source", p.Ctx, "pending", t.plan.Pending()} // a run does not count new rows first
	if t.plan.NewRows >= 0 {
		attrs = append(attrs, "new_rows", t.plan.NewRows)
	}
	attrs = append(attrs, "late_rows", t.plan.Late, "after", strings.Join(t.plan.From, ","),
		"up_to", strings.Join(t.plan.To, ","), "bounded", t.plan.Bounded)
	r.log.Info("planned", attrs...)
	if t.plan.Regressions > 0 {
		r.log.Warn("rows appeared behind the bookmark and will not be read: the bookmark keys are not monotonic, or a transaction committed later than the lookback; widen lookback or choose keys that only grow",
			"source", p.Ctx, "rows", t.plan.Regressions)
	}
	if t.plan.NullKeys > 0 {
		r.log.Warn("rows with a NULL bookmark key left out (on_null_key: skip)", "source", p.Ctx, "rows", t.plan.NullKeys)
	}
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
		if err = publish(ctx, r.st, r.rs, r.job, r.rec.RunID, r.log); err == nil {
			return nil
		}
		if attempt == publishAttempts || ctx.Err() != nil {
			break
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
}

func (e *UnpublishedError) Error() string {
	return fmt.Sprintf("run %s committed but publishing its output failed: %v; "+
		"the output is staged and the next `tidemark run` (or `bookmark reset`) publishes it first", e.RunID, e.Err)
}

func (e *UnpublishedError) Unwrap() error { return e.Err }

// tempPrefix names this job's temporary folders in the spill folder, so the
// next run of the job (which holds the lease) can delete what a killed run
// left there.
func (r *runner) tempPrefix() string { return "tidemark_" + r.job + "@" }

// cleanDeadTemp deletes temporary folders that earlier, dead runs of the job
// left in the spill folder.
func (r *runner) cleanDeadTemp() {
	dir := r.spillDir()
	if dir == "" {
		dir = os.TempDir()
	}
	old, _ := filepath.Glob(filepath.Join(dir, r.tempPrefix()+"*"))
	for _, d := range old {
		r.log.Info("deleting temporary files of a run that died", "path", d)
		_ = os.RemoveAll(d)
	}
}
