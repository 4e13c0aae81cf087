package tidemark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// RunOptions are the per-invocation settings of Run.
type RunOptions struct {
	// Mode overrides the job file's bookmark mode when set.
	Mode bookmark.Mode
	// From and To (pause only) re-read exactly what runs (From, To] read.
	From, To string
	// State overrides the state location.
	State string
	// JobName overrides the job file's job: (Glue's --JOB_NAME).
	JobName string
	// AllowSourceChange keeps bookmarks whose source definition changed.
	AllowSourceChange bool
	// AdoptSink makes the job and its state store the owner of its file
	// sink locations whatever their ownership records say (a hand-over, or
	// a new history after a lost state).
	AdoptSink bool
	// LeaseTTL defaults to DefaultLeaseTTL.
	LeaseTTL time.Duration
	// HostID names this host in the job's lease and in the run record
	// (store.Holder.Host, store.Run.Host); DefaultHostID (hostname:pid) if
	// empty. Give each host (each process that may run the job at the same
	// time) an id of its own: a lease whose holder has this id, or this
	// machine's default id, and whose process is gone is taken over at once.
	HostID string
	// Now, if set, is the run's own clock (a test hook that skews it): it
	// stamps the run's start and finish and is the listing's "now" for
	// timestamp tracking. Lease expiry is judged by the store's clock
	// whatever it says.
	Now    func() time.Time
	Logger *slog.Logger
	// Progress, if set, receives progress events.
	Progress Progress
	// Observer, if set, is told when the run begins and ends. Run
	// (package tidemark) sends the job's OpenLineage events (its lineage:
	// block, or OPENLINEAGE_URL) when it is not set.
	Observer Observer
	// CrawlReport, if set, receives the human report of the job's crawler
	// (its crawler: key), which Run (package tidemark) runs before the run
	// plans; otherwise the report is one "crawl finished" line on Logger.
	CrawlReport io.Writer
}

// Progress receives a run's progress: files and bytes read.
type Progress interface {
	// Phase starts a phase with a total (files and bytes; 0 if unknown).
	Phase(name string, files, bytes int64)
	// Add reports done work in the current phase.
	Add(files, bytes int64)
	// Done ends the current phase.
	Done()
}

// EngineProgress is a Progress that also shows how far the engine has come
// in the processing phase: Run calls Engine a few times a second while the
// engine runs (never at the same time as Phase or Done), when the engine
// can tell (engine.Progresser).
type EngineProgress interface {
	Progress
	// Engine reports the running statement's progress: percent (0-100) of
	// its estimated work (for file scans, the share of the input read) and
	// the rows it has processed.
	Engine(percent float64, rows int64)
}

// Result is a run's summary; its JSON form is the contract's run --json.
type Result struct {
	Job        string                 `json:"job"`
	RunID      string                 `json:"run_id"`
	Attempt    int                    `json:"attempt"`
	Status     string                 `json:"status"`
	Mode       bookmark.Mode          `json:"mode"`
	Sources    map[string]store.Count `json:"sources"`
	Sinks      map[string]store.Count `json:"sinks"`
	DurationMS int64                  `json:"duration_ms"`
	Version    int64                  `json:"version"`
	Error      string                 `json:"error,omitempty"`
	StartedAt  *time.Time             `json:"started_at,omitempty"`
	FinishedAt *time.Time             `json:"finished_at,omitempty"`
	Undone     bool                   `json:"undone,omitempty"`
	Purged     bool                   `json:"purged,omitempty"`
	// Host is the host identity that ran it (RunOptions.HostID).
	Host string `json:"host,omitempty"`
	// Batches lists the run records of a run read in batches (the job's
	// batch_files), oldest first; the counts above are their sums, RunID
	// the first's and Version the last committed. Absent for a run read in
	// one batch.
	Batches []BatchResult `json:"batches,omitempty"`
}

// ResultOf converts a stored run record.
func ResultOf(r store.Run) Result {
	res := Result{Job: r.Job, RunID: r.RunID, Attempt: r.Attempt, Status: r.Status, Mode: r.Mode,
		Sources: r.Sources, Sinks: r.Sinks, Version: r.Version, Error: secret.Redact(r.Error), Undone: r.Undone, Purged: r.Purged,
		Host: r.Host}
	started := r.StartedAt
	res.StartedAt = &started
	if !r.FinishedAt.IsZero() {
		f := r.FinishedAt
		res.FinishedAt = &f
		res.DurationMS = f.Sub(started).Milliseconds()
	}
	if res.Sources == nil {
		res.Sources = map[string]store.Count{}
	}
	if res.Sinks == nil {
		res.Sinks = map[string]store.Count{}
	}
	return res
}

// jobFile is the job file's absolute path ("" for a spec made in code
// without one), recorded in the run so that tools can plan the job again.
func jobFile(spec *job.Spec) string {
	if spec.File == "" {
		return ""
	}
	abs, err := filepath.Abs(spec.File)
	if err != nil {
		return ""
	}
	return abs
}

// checkOptions has the engine check every reader and writer option, and
// the object stores every s3: setting (Parse did already; a Spec built in
// code may not have been parsed).
func checkOptions(spec *job.Spec) error { return spec.CheckOptions() }

// open applies defaults, checks the options and opens the job's state
// store; it returns the job name in force (--JOB_NAME wins).
func (o *RunOptions) open(ctx context.Context, spec *job.Spec) (string, store.Store, error) {
	if err := o.defaults(spec); err != nil {
		return "", nil, err
	}
	jobName := spec.Job
	if o.JobName != "" {
		jobName = o.JobName
	}
	loc, origin := StateOrigin(o.State, spec)
	if err := checkSinkPaths(spec, loc); err != nil {
		return "", nil, err
	}
	st, err := OpenState(ctx, loc)
	if err != nil {
		if errors.Is(err, ErrUsage) {
			return "", nil, err
		}
		return "", nil, &StateError{Location: store.Redact(loc), Origin: origin, Err: err}
	}
	return jobName, st, nil
}

// now is the run's clock: Now, or the local clock.
func (o *RunOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *RunOptions) defaults(spec *job.Spec) error {
	if err := checkOptions(spec); err != nil {
		return err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.LeaseTTL < 0 {
		return fmt.Errorf("%w: lease ttl %s is not positive", ErrUsage, o.LeaseTTL)
	}
	if o.HostID == "" {
		o.HostID = DefaultHostID()
	}
	if o.Mode == "" {
		m, err := bookmark.ParseMode(spec.Bookmark)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		o.Mode = m
	}
	if o.JobName != "" && !job.ValidName(o.JobName) {
		return fmt.Errorf("%w: --JOB_NAME %q: %s", ErrUsage, o.JobName, job.NameRule)
	}
	if (o.From == "") != (o.To == "") {
		return fmt.Errorf("%w: --job-bookmark-from and --job-bookmark-to go together", ErrUsage)
	}
	if o.From != "" && o.Mode != bookmark.ModePause {
		return fmt.Errorf("%w: --job-bookmark-from/--job-bookmark-to need --job-bookmark-option pause", ErrUsage)
	}
	return nil
}

// execute runs the job itself (Run, less its crawler and lineage): plan against the bookmark, execute on the
// engine, commit bookmark + run + manifests in one transaction, publish.
// On error the bookmark did not move and nothing of the run is published;
// the returned Result (non-nil once the run was recorded) says what it did.
func execute(ctx context.Context, spec *job.Spec, opts RunOptions) (*Result, error) {
	jobName, st, err := opts.open(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer st.Close()

	started := opts.now().UTC()
	r := &runner{spec: spec, opts: opts, st: st, job: jobName, log: opts.Logger}
	r.rec = store.Run{Job: jobName, RunID: newRunID(started), Mode: opts.Mode, Status: store.StatusRunning, StartedAt: started,
		JobFile: jobFile(spec), Host: opts.HostID}
	defer r.close()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer func() {
		if r.lease != nil {
			r.lease.release()
		}
	}()
	var claimErr, openErr error
	if err := r.begin(ctx, started, cancel, func(ctx context.Context) error {
		claimErr = r.openSinks(ctx)
		openErr = r.openSources(ctx)
		return r.check(ctx, &claimErr)
	}); err != nil {
		return nil, err
	}
	err = claimErr
	if err == nil {
		err = openErr
	}
	if err == nil {
		err = r.recover(ctx)
	}
	if err == nil {
		err = r.execute(ctx)
	}
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = fmt.Errorf("%w (%v)", err, cause)
	}
	if err != nil {
		r.fail(ctx, err)
		res := r.result()
		res.DurationMS = opts.now().Sub(started).Milliseconds()
		res.Status, res.Error = store.StatusFailed, secret.Redact(err.Error())
		r.observeEnd(ctx, res, err)
		return &res, err
	}
	res := r.result()
	res.DurationMS = opts.now().Sub(started).Milliseconds()
	res.Status = store.StatusSucceeded
	r.observeEnd(ctx, res, nil)
	return &res, nil
}

// check is Run's part of begin: the checks that refuse a run before it
// is recorded, in order. A sink that is not the job's is refused (exit 2);
// an error opening a sink or reading its record (left in *claimErr) fails
// the recorded run. Sinks are claimed after the other checks, so that no
// refused run leaves a claim on a location it never wrote to.
func (r *runner) check(ctx context.Context, claimErr *error) error {
	// A source naming a catalog table, or partition keys, that are not
	// there; resolved first, a catalog source's definition is checked with
	// the others'.
	if err := r.resolveSources(ctx); err != nil {
		return err
	}
	// A sink inside a folder a catalog source reads.
	if err := checkCatalogSinks(ctx, r.spec, r.sources, r.st); err != nil {
		return err
	}
	// A source whose definition changed under its ctx.
	if err := r.checkSourceDefinitions(ctx); err != nil {
		return err
	}
	// A password_env naming a variable that is not set.
	if err := checkPasswordEnv(r.spec); err != nil {
		return err
	}
	if *claimErr == nil {
		*claimErr = r.claimSinks(ctx)
	}
	var owned *sink.OwnedError
	if errors.As(*claimErr, &owned) {
		return *claimErr
	}
	return nil
}

// openSinks opens every sink of the job.
func (r *runner) openSinks(ctx context.Context) error {
	for _, k := range r.spec.Sinks {
		s, err := sink.Open(ctx, r.spec, k)
		if err != nil {
			return err
		}
		r.sinks = append(r.sinks, s)
	}
	return nil
}

// openSources opens every source of the job.
func (r *runner) openSources(ctx context.Context) error {
	for _, src := range r.spec.Sources {
		s, err := source.Open(ctx, r.spec, src)
		if err != nil {
			return err
		}
		r.sources = append(r.sources, s)
	}
	return nil
}

// close closes the opened sources and sinks.
func (r *runner) close() {
	for _, s := range r.sources {
		_ = s.Close()
	}
	for _, k := range r.sinks {
		_ = k.Close()
	}
}

// claimSinks makes sure every sink's location is the job's own under this
// state store before anything of the run touches a sink. Every sink is
// checked before any is claimed: a claim takes a location over from the
// store a copy was made of and names the run, so a run refused at a later
// sink would leave an earlier one naming a run no store records (and the
// store copied from, which still runs the job, refused there). A job of
// one sink needs no check first: its claim is the only one.
func (r *runner) claimSinks(ctx context.Context) error {
	passes := []bool{true, false}
	if len(r.sinks) < 2 {
		passes = passes[1:]
	}
	for _, check := range passes {
		for _, k := range r.sinks {
			if err := r.claim(ctx, k, check); err != nil {
				return err
			}
		}
	}
	return nil
}

// claim makes sure one sink's location is the job's own under this state
// store (check: checks only).
func (r *runner) claim(ctx context.Context, k sink.Sink, check bool) error {
	id, err := r.st.Identity(ctx)
	if err != nil {
		return err
	}
	head, err := r.st.Head(ctx, r.job)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	c := sink.Claim{Job: r.job, Identity: id, Version: head.Version, Mode: r.opts.Mode, Adopt: r.opts.AdoptSink,
		RunID: r.rec.RunID, Known: knownRun(r.st, r.job), CheckOnly: check, Log: r.log}
	return k.Claim(ctx, c)
}

// knownRun is sink.Claim.Known: whether st has a record of a run of job.
func knownRun(st store.Store, job string) func(ctx context.Context, runID string) (bool, error) {
	return func(ctx context.Context, runID string) (bool, error) {
		_, err := st.Run(ctx, job, runID)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading run %s: %w", runID, err)
		}
		return true, nil
	}
}

// rangeRuns resolves pause from/to into the enable runs (from, to] whose
// inputs the run re-reads.
func rangeRuns(ctx context.Context, st store.Store, jobName, from, to string) ([]string, error) {
	fromSeq, err := runSeq(ctx, st, jobName, from, "--job-bookmark-from")
	if err != nil {
		return nil, err
	}
	toSeq, err := runSeq(ctx, st, jobName, to, "--job-bookmark-to")
	if err != nil {
		return nil, err
	}
	if toSeq <= fromSeq {
		return nil, fmt.Errorf("%w: --job-bookmark-to %s is not after --job-bookmark-from %s", ErrUsage, to, from)
	}
	// The runs (from, to], newest first: exactly toSeq-fromSeq of them.
	runs, err := st.Runs(ctx, jobName, store.RunQuery{BeforeSeq: toSeq + 1, Limit: int(toSeq - fromSeq)})
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, r := range runs {
		if r.Seq > fromSeq && r.Seq <= toSeq && r.Mode == bookmark.ModeEnable && r.Status == store.StatusSucceeded && !r.Undone {
			ids = append(ids, r.RunID)
		}
	}
	return ids, nil
}

// runSeq returns the Seq of run id, named by flag; a usage error if the
// job has no such run.
func runSeq(ctx context.Context, st store.Store, jobName, id, flag string) (int64, error) {
	r, err := st.Run(ctx, jobName, id)
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%w: %s %s: no such run of job %s", ErrUsage, flag, id, jobName)
	}
	if err != nil {
		return 0, err
	}
	return r.Seq, nil
}

// resolveSources has every source.Resolver look up what its definition
// names, before the run is recorded: a job-file error there is no run.
func (r *runner) resolveSources(ctx context.Context) error {
	for _, src := range r.sources {
		rv, ok := src.(source.Resolver)
		if !ok {
			continue
		}
		var je *job.Error
		if err := rv.Resolve(ctx, r.st); errors.As(err, &je) {
			return err
		}
		// Any other error fails the recorded run: Plan resolves again.
	}
	return nil
}

// checkSourceDefinitions refuses a run whose source's definition (path,
// format, options, globs, tracking) changed since its bookmark was
// written, before the run is recorded (it is a job-file matter, not a
// failed run). Sources that can tell only once connected (SQL tables)
// check when they are planned.
func (r *runner) checkSourceDefinitions(ctx context.Context) error {
	if r.opts.Mode == bookmark.ModeDisable || r.opts.AllowSourceChange {
		return nil
	}
	states, err := r.st.SourceStates(ctx, r.job)
	if err != nil || len(states) == 0 {
		return nil // reading fails the recorded run, as planning would
	}
	for _, src := range r.sources {
		if prev, ok := states[src.Ctx()]; ok {
			if err := src.CheckDefinition(ctx, prev); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPasswordEnv is a usage error when a SQL source or sink's
// password_env names a variable that is not set: found before the run is
// recorded, like the other usage errors.
func checkPasswordEnv(spec *job.Spec) error {
	check := func(what, ctxName, env string) error {
		if env == "" {
			return nil
		}
		if _, ok := os.LookupEnv(env); !ok {
			return fmt.Errorf("%w: %s %s: password_env: environment variable %s is not set", ErrUsage, what, ctxName, env)
		}
		return nil
	}
	variable := func(c job.Config) string {
		if p, ok := c.(job.PasswordVarer); ok {
			return p.PasswordVar()
		}
		return ""
	}
	for _, src := range spec.Sources {
		if err := check("source", src.Ctx, variable(src.Config)); err != nil {
			return err
		}
	}
	for _, k := range spec.Sinks {
		if err := check("sink", k.Ctx, variable(k.Config)); err != nil {
			return err
		}
	}
	return nil
}
