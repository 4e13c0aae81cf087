package tidemark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// SessionOptions are the settings of BeginSession.
type SessionOptions struct {
	// Job is the job's name (Glue's --JOB_NAME).
	Job string
	// Dir is the folder relative paths are taken from (the script's).
	Dir string
	// Mode, From and To as for RunOptions (Mode defaults to enable).
	Mode     bookmark.Mode
	From, To string
	// State is the state store's location.
	State string
	// Reads are the URL schemes of inputs the program reads itself
	// ("file" for local paths): anything else is downloaded first.
	Reads []string
	// HostID names this host in the lease and the run record (default:
	// DefaultHostID).
	HostID string
	// LeaseTTL defaults to DefaultLeaseTTL.
	LeaseTTL time.Duration
	Logger   *slog.Logger
	// Observer, if set, is told when the run is recorded and when it
	// ends; otherwise the run's OpenLineage events are sent as Run sends
	// a job's (OPENLINEAGE_URL).
	Observer Observer
}

// Session is one run whose engine is another program — a Glue-style
// script that declares its sources and sinks as it goes. The session
// plans each source when the program asks for it and hands over the
// inputs as locations the program reads; it gives each sink a staging
// location the program writes into; Commit stages that output, commits
// the bookmark, the run and its manifests in one state-store transaction
// and publishes, exactly as Run does. Until Commit nothing is recorded
// but the running run: a program that dies first publishes nothing, and
// the next run reads the same input again.
//
// Each source and sink is checked when it is declared, with Run's checks
// in Run's order (lifecycle.go). The run is recorded at the first sink
// (or at Commit, or when the session fails): a declaration refused before
// that — a source whose definition changed, a catalog table that is not
// there, a sink another job owns, a password_env not set — is a usage or
// job-file error (exit 2) and, if the program ends on it, no run.
//
// A Session holds the job's lease from BeginSession until Commit or Abort.
// Its methods are safe for concurrent use; Source and Sink are idempotent
// on their ctx, Commit and Abort on the session.
type Session struct {
	mu      sync.Mutex
	r       *runner
	started time.Time
	head    store.Head
	states  map[string]bookmark.SourceState
	srcs    map[string]*sessionSource
	snks    map[string]*sessionSink
	order   []string // source ctxs in the order they were asked for
	result  *Result
	err     error // the outcome once ended
	ended   bool
	// recorded: the run is recorded (record); refused: the last
	// declaration was refused by a check, so a session ending before it
	// recorded the run is no run.
	recorded, refused bool
	flush             func() // sends what the lineage observer queued
	cancel            context.CancelCauseFunc
	ctx               context.Context // the lease renewer's: canceled when the lease is lost
}

type sessionSource struct {
	index   int // in r.sources and r.plans
	plan    source.Plan
	reading source.Reading
	input   engine.Source
}

type sessionSink struct {
	staging sink.Staging
	target  engine.Sink
}

// BeginSession takes the job's lease, finishes what earlier runs left
// (roll-forward) and records the run as running. A running job yields an
// error wrapping store.ErrLeaseHeld.
func BeginSession(ctx context.Context, o SessionOptions) (*Session, error) {
	if o.Job == "" {
		return nil, fmt.Errorf("%w: a session needs a job name", ErrUsage)
	}
	if !job.ValidName(o.Job) {
		return nil, fmt.Errorf("%w: job name %q: %s", ErrUsage, o.Job, job.NameRule)
	}
	spec := &job.Spec{Job: o.Job, Dir: o.Dir, State: o.State}
	spec.ApplyDefaults()
	if o.Mode == "" {
		o.Mode = bookmark.ModeEnable
	}
	opts := RunOptions{Mode: o.Mode, From: o.From, To: o.To, State: o.State, HostID: o.HostID, LeaseTTL: o.LeaseTTL, Logger: o.Logger,
		Observer: o.Observer}
	jobName, st, err := opts.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	flush := func() {}
	if opts.Observer == nil {
		opts.Observer, flush = startLineage(spec, opts.Logger)
	}
	started := time.Now().UTC()
	r := &runner{spec: spec, opts: opts, st: st, job: jobName, log: opts.Logger}
	r.rec = store.Run{Job: jobName, RunID: newRunID(started), Mode: opts.Mode, Status: store.StatusRunning, StartedAt: started,
		Host: opts.HostID}
	s := &Session{r: r, started: started, srcs: map[string]*sessionSource{}, snks: map[string]*sessionSink{}, flush: flush}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	// Begin's first part; its checks come with each declaration, and the
	// run is recorded at the first sink (lifecycle.go).
	if err := r.take(ctx, started, s.cancel); err != nil {
		s.closeAll()
		return nil, err
	}
	if err := s.begin(ctx, o.Reads); err != nil {
		_, err = s.end(ctx, err) // recorded as a failed run
		return nil, err
	}
	return s, nil
}

// begin finishes what earlier runs left and reads the bookmark the
// session plans against.
func (s *Session) begin(ctx context.Context, reads []string) error {
	r := s.r
	if err := r.recover(ctx); err != nil {
		return err
	}
	var err error
	if s.head, err = r.st.Head(ctx, r.job); err == nil {
		s.states, err = r.st.SourceStates(ctx, r.job)
	}
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	r.sessionReads = reads
	return nil
}

// record records the run, once: at the first sink, at Commit, or when the
// session fails.
func (s *Session) record(ctx context.Context) error {
	if s.recorded {
		return nil
	}
	if err := s.r.record(ctx); err != nil {
		return err
	}
	s.recorded = true
	return nil
}

// refuse returns err, a declaration refused by a check: a session that
// ends on it before its run was recorded is no run.
func (s *Session) refuse(err error) error {
	s.refused = true
	return err
}

// failed returns err, a declaration that failed otherwise than refused:
// the session's run is recorded when it ends on it.
func (s *Session) failed(err error) error {
	s.refused = false
	return err
}

// RunID is the session's run id.
func (s *Session) RunID() string { return s.r.rec.RunID }

// Job is the session's job name.
func (s *Session) Job() string { return s.r.job }

// Mode is the session's bookmark mode.
func (s *Session) Mode() bookmark.Mode { return s.r.opts.Mode }

// Version is the bookmark version the session planned against.
func (s *Session) Version() int64 { return s.head.Version }

// Source plans src for this run and readies its input: the files new for
// its ctx (all of them under disable) as locations the program reads. A
// second call for the same ctx returns the first answer. noBookmark reads
// the source as disable does whatever the session's mode (Glue's empty
// transformation_ctx): it is neither planned against nor recorded in the
// bookmark.
func (s *Session) Source(ctx context.Context, src job.Source, noBookmark bool) (engine.Source, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, err := s.source(ctx, src, noBookmark, true)
	if err != nil {
		return engine.Source{}, err
	}
	return ss.input, nil
}

// source declares src: checked, planned and, with open, its input readied
// for the program (without, the plan alone is the answer: the Bookmarks
// API hands over the files, not their contents). s.mu is held.
func (s *Session) source(ctx context.Context, src job.Source, noBookmark, open bool) (*sessionSource, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if ss, ok := s.srcs[src.Ctx]; ok {
		return ss, nil
	}
	r := s.r
	if src.Config != nil {
		src.Config.ApplyDefaults(r.spec)
	}
	if err := r.spec.ValidateSource(src); err != nil {
		return nil, s.refuse(fmt.Errorf("%w: %v", ErrUsage, err))
	}
	r.spec.Sources = append(r.spec.Sources, src)
	undo := func() { r.spec.Sources = r.spec.Sources[:len(r.spec.Sources)-1] }
	// A source read after a sink was readied may hold that sink's folder
	// (or the state): it would read the job's own output as input.
	if err := checkSinkPaths(r.spec, r.opts.State); err != nil {
		undo()
		return nil, s.refuse(err)
	}
	opened, err := source.Open(ctx, r.spec, r.spec.Sources[len(r.spec.Sources)-1])
	if err != nil {
		undo()
		// As Run: a source that cannot be opened is still checked for its
		// password_env, and refused if it is not set.
		if perr := checkPasswordEnv(&job.Spec{Sources: []job.Source{src}}); perr != nil {
			return nil, s.refuse(perr)
		}
		return nil, s.failed(err)
	}
	mode := r.opts.Mode
	if noBookmark {
		mode = bookmark.ModeDisable
	}
	prev, has := s.states[src.Ctx]
	if err := s.checkSource(ctx, src, opened, mode, prev, has); err != nil {
		_ = opened.Close()
		undo()
		return nil, s.refuse(err)
	}
	req := source.Request{Job: r.job, Mode: mode, State: r.st, Catalog: r.st, Prev: prev, HasPrev: has, Now: time.Now(),
		DiskBudget: max(r.spec.IO.DiskBudget.Bytes, 1)}
	if r.opts.From != "" && !noBookmark {
		req.RangeRuns = r.rangeIDs
	}
	p, err := opened.Plan(ctx, req)
	if err != nil {
		_ = opened.Close()
		undo()
		return nil, s.failed(err)
	}
	p.Report(r.log)
	r.sources = append(r.sources, opened)
	r.plans = append(r.plans, p)
	ss := &sessionSource{index: len(r.plans) - 1, plan: p}
	if noBookmark {
		s.noBookmark(src.Ctx)
	}
	if p.Pending() > 0 && open {
		env := source.Env{Caps: engine.Caps{Read: r.sessionReads}, Policy: p.BadRecords(), TempDir: r.inputDir,
			Concurrency: r.spec.IO.Concurrency, Log: r.log}
		if ss.reading, err = p.Open(ctx, env); err != nil {
			return nil, s.failed(err)
		}
		ss.input = ss.reading.Input()
	} else {
		ss.input = engine.Source{Ctx: src.Ctx, Schema: prev.Schema}
	}
	s.srcs[src.Ctx] = ss
	s.order = append(s.order, src.Ctx)
	s.refused = false
	return ss, nil
}

// checkSource runs Run's checks (execute.go, runner.check) on one source
// being declared, in Run's order.
func (s *Session) checkSource(ctx context.Context, src job.Source, opened source.Source, mode bookmark.Mode,
	prev bookmark.SourceState, has bool) error {
	r := s.r
	// A catalog table, or partition keys, that are not there.
	if rv, ok := opened.(source.Resolver); ok {
		var je *job.Error
		if err := rv.Resolve(ctx, r.st); errors.As(err, &je) {
			return err
		}
	}
	// A sink inside a folder a catalog source reads.
	if err := checkCatalogSinks(ctx, r.spec, []source.Source{opened}, r.st); err != nil {
		return err
	}
	// A definition that changed under its ctx.
	if has && mode != bookmark.ModeDisable {
		if err := opened.CheckDefinition(ctx, prev); err != nil {
			return err
		}
	}
	// A password_env naming a variable that is not set.
	return checkPasswordEnv(&job.Spec{Sources: []job.Source{src}})
}

// Sink readies k's staging location for this run: where the program
// writes the sink's rows (a local folder). A second call for the same ctx
// returns the first answer.
func (s *Session) Sink(ctx context.Context, k job.Sink) (engine.Sink, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.live(); err != nil {
		return engine.Sink{}, err
	}
	if sk, ok := s.snks[k.Ctx]; ok {
		return sk.target, nil
	}
	r := s.r
	if k.Config != nil {
		k.Config.ApplyDefaults(r.spec)
	}
	if err := r.spec.ValidateSink(k); err != nil {
		return engine.Sink{}, s.refuse(fmt.Errorf("%w: %v", ErrUsage, err))
	}
	r.spec.Sinks = append(r.spec.Sinks, k)
	undo := func() { r.spec.Sinks = r.spec.Sinks[:len(r.spec.Sinks)-1] }
	if err := checkSinkPaths(r.spec, r.opts.State); err != nil {
		undo()
		return engine.Sink{}, s.refuse(err)
	}
	sinkEnv := checkPasswordEnv(&job.Spec{Sinks: []job.Sink{k}})
	opened, err := sink.Open(ctx, r.spec, r.spec.Sinks[len(r.spec.Sinks)-1])
	if err != nil {
		undo()
		if sinkEnv != nil {
			return engine.Sink{}, s.refuse(sinkEnv)
		}
		return engine.Sink{}, s.failed(err)
	}
	// Run's checks, in Run's order: a sink inside a folder a catalog
	// source reads, a password_env not set, a location another job owns.
	err = checkCatalogSinks(ctx, r.spec, r.sources, r.st)
	if err == nil {
		err = sinkEnv
	}
	if err == nil {
		var owned *sink.OwnedError
		if err = r.claim(ctx, opened, false); err != nil && !errors.As(err, &owned) {
			_ = opened.Close()
			undo()
			return engine.Sink{}, s.failed(err)
		}
	}
	if err != nil {
		_ = opened.Close()
		undo()
		return engine.Sink{}, s.refuse(err)
	}
	// Checked: the run is recorded before anything of it is staged.
	if err := s.record(ctx); err != nil {
		_ = opened.Close()
		undo()
		return engine.Sink{}, s.failed(err)
	}
	if err := opened.Cleanup(ctx, deadRuns(ctx, r.st, r.job), r.log); err != nil {
		_ = opened.Close()
		undo()
		return engine.Sink{}, s.failed(err)
	}
	r.sinks = append(r.sinks, opened)
	run := sink.Run{ID: r.rec.RunID, TempDir: r.stageDir, Concurrency: r.spec.IO.Concurrency,
		Engine: engine.Caps{Read: []string{"file"}, Write: []string{"file"}}, Log: r.log, Catalog: r.st}
	stg, err := opened.Prepare(ctx, run)
	if err != nil {
		return engine.Sink{}, s.failed(err)
	}
	r.stagings = append(r.stagings, stg)
	stg.EngineStarted(ctx)
	sk := &sessionSink{staging: stg, target: stg.Target()}
	s.snks[k.Ctx] = sk
	s.refused = false
	return sk.target, nil
}

// SourceReport is what the program tells Commit of one source it read.
type SourceReport struct {
	// Rows read, if the program counted them (0: unknown).
	Rows int64
	// Schema the program read the source with (engine-neutral type
	// texts); nil keeps the recorded schema.
	Schema []bookmark.Column
}

// Commit finishes the run: it settles every source's reading, stages what
// the program wrote into each sink's location, commits and publishes. A
// second call returns the first's outcome. On error nothing was committed
// (unless the error is an *UnpublishedError) and the lease is released.
func (s *Session) Commit(ctx context.Context, reports map[string]SourceReport) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return s.result, s.err
	}
	err := s.commit(ctx, reports)
	return s.end(ctx, err)
}

func (s *Session) commit(ctx context.Context, reports map[string]SourceReport) error {
	if err := context.Cause(s.ctx); err != nil {
		return fmt.Errorf("the job's lease: %w", err)
	}
	if err := s.record(ctx); err != nil {
		return err
	}
	r := s.r
	res := engine.Result{Sources: map[string]engine.SourceResult{}, Sinks: map[string]engine.SinkResult{}}
	var total int64
	for _, name := range s.order {
		ss := s.srcs[name]
		rep := reports[name]
		sr := engine.SourceResult{Rows: rep.Rows, Schema: rep.Schema}
		if sr.Rows == 0 {
			// The program did not count what it read: count its input.
			n, _, err := engine.InputRows(ss.input)
			if err != nil {
				return err
			}
			sr.Rows = n
		}
		if sr.Schema == nil {
			sr.Schema = ss.input.Schema
		}
		res.Sources[name] = sr
		total += r.plans[ss.index].Pending()
		if ss.reading == nil {
			continue
		}
		if _, err := ss.reading.Done(ctx, nil, sr, true); err != nil {
			ss.reading = nil
			return err
		}
		ss.reading = nil
	}
	for name, sk := range s.snks {
		files, rows, err := engine.Written(sk.target)
		if err != nil {
			return err
		}
		res.Sinks[name] = engine.SinkResult{Files: files, Rows: rows}
		sk.staging.EngineReturned(ctx, nil)
	}
	_, err := r.settle(ctx, s.head.Version, s.states, res, r.opts.Mode.Advances() && total > 0)
	return err
}

// Abort ends the run without committing: what the program staged is
// deleted, the run is recorded as failed with reason, and the lease is
// released. After Commit it does nothing. Idempotent.
func (s *Session) Abort(ctx context.Context, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	if reason == "" {
		reason = "aborted"
	}
	_, _ = s.end(ctx, errors.New(reason))
	return nil
}

// Result is the session's outcome once it ended (nil before).
func (s *Session) Result() *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result
}

// live fails once the session ended or lost its lease.
func (s *Session) live() error {
	if s.ended {
		return errors.New("the run already ended (committed or aborted)")
	}
	if err := context.Cause(s.ctx); err != nil {
		return fmt.Errorf("the job's lease: %w", err)
	}
	return nil
}

// noBookmark keeps ctx's state out of the commit (an empty
// transformation_ctx reads as disable does).
func (s *Session) noBookmark(ctx string) {
	if s.r.skipState == nil {
		s.r.skipState = map[string]bool{}
	}
	s.r.skipState[ctx] = true
}

// end records the outcome, releases everything, and returns the result.
func (s *Session) end(ctx context.Context, err error) (*Result, error) {
	r := s.r
	s.ended = true
	for _, ss := range s.srcs {
		if ss.reading != nil {
			_, _ = ss.reading.Done(ctx, err, engine.SourceResult{}, true)
		}
	}
	// A failure is a run's, recorded as Run records a run whose source
	// could not be opened; a refusal before the run was recorded is no run.
	if err != nil && !s.refused {
		if rerr := s.record(ctx); rerr != nil {
			r.log.Error("recording the failed run", "run", r.rec.RunID, "err", rerr)
		}
	}
	if !s.recorded {
		s.result, s.err = nil, err
		s.closeAll()
		return nil, err
	}
	if err != nil {
		r.fail(ctx, err)
	}
	res := ResultOf(r.rec)
	res.DurationMS = time.Since(s.started).Milliseconds()
	if err != nil {
		res.Status, res.Error = store.StatusFailed, secret.Redact(err.Error())
	} else {
		res.Status = store.StatusSucceeded
	}
	r.observeEnd(ctx, res, err)
	s.result, s.err = &res, err
	s.closeAll()
	return s.result, err
}

// closeAll releases the lease, the sources, the sinks, the temporary
// folders and the store.
func (s *Session) closeAll() {
	r := s.r
	r.cleanupTemp()
	r.close()
	if r.lease != nil {
		r.lease.release()
	}
	s.cancel(nil)
	s.flush()
	_ = r.st.Close()
}
