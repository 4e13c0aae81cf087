package tidemark

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tidemark-etl/tidemark/crawler"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/lineage"
	"github.com/tidemark-etl/tidemark/store"
)

// lineageDrain is how long a run's end waits at most for its lineage
// events to be sent.
const lineageDrain = 2 * time.Second

// Run executes one run of the job: its crawler first (its crawler: key),
// then plan against the bookmark, execute on the engine, commit bookmark +
// run + manifests in one transaction, publish; the job's OpenLineage
// events (its lineage: block, or OPENLINEAGE_URL) are sent unless
// opts.Observer is set. On error the bookmark did not move and nothing of
// the run is published; the returned Result (non-nil once the run was
// recorded) says what it did.
func Run(ctx context.Context, spec *job.Spec, opts RunOptions) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Observer == nil {
		var flush func()
		opts.Observer, flush = startLineage(spec, log)
		defer flush()
	}
	if err := crawlBeforeRun(ctx, spec, opts, log); err != nil {
		return nil, err
	}
	return execute(ctx, spec, opts)
}

// startLineage returns the observer that sends spec's runs as OpenLineage
// events (nil when no endpoint is configured) and the function that
// flushes them, waiting at most lineageDrain.
func startLineage(spec *job.Spec, log *slog.Logger) (Observer, func()) {
	cfg, ok := lineage.ConfigOf(spec, os.Getenv, log)
	if !ok {
		return nil, func() {}
	}
	c, err := lineage.NewClient(cfg, log)
	if err != nil {
		log.Warn("lineage: not sending events", "err", err)
		return nil, func() {}
	}
	obs := specLineage{spec: spec, send: c, opts: lineage.ObserverOptions{Namespace: os.Getenv(lineage.EnvNamespace)}}
	return obs, func() { c.Close(lineageDrain) }
}

// specLineage tells lineage of the runs of spec, with spec's datasets as
// they are at each event: a Session's grow as its program declares them.
type specLineage struct {
	spec *job.Spec
	send lineage.Sender
	opts lineage.ObserverOptions
}

func (l specLineage) RunStarted(ctx context.Context, ev RunEvent) {
	LineageObserver(lineage.NewObserver(l.spec, l.send, l.opts)).RunStarted(ctx, ev)
}

func (l specLineage) RunFinished(ctx context.Context, ev RunEvent) {
	LineageObserver(lineage.NewObserver(l.spec, l.send, l.opts)).RunFinished(ctx, ev)
}

// crawlBeforeRun runs a job's crawler (its crawler: key) in the job's
// state store before the run plans its sources.
func crawlBeforeRun(ctx context.Context, spec *job.Spec, opts RunOptions, log *slog.Logger) error {
	if spec.Crawler == nil {
		return nil
	}
	loc := StateLocation(opts.State, spec)
	cfg, ok := spec.Crawler.Config.(*crawler.Config)
	if !ok {
		var err error
		if cfg, err = crawler.Load(spec.Resolve(spec.Crawler.File)); err != nil {
			return err
		}
		if s := cfg.StateLocation(); s != "" && store.Redact(s) != store.Redact(loc) {
			return spec.ErrorAt("$.crawler", "crawler file %s has state: %s, but a job's crawler crawls into the job's state store (%s): "+
				"remove its state: or make them the same", spec.Crawler.File, store.Redact(s), store.Redact(loc))
		}
	}
	rep, err := Crawl(ctx, cfg, loc, crawler.Options{Logger: log, Host: opts.HostID})
	if err != nil {
		return fmt.Errorf("crawler %s, run before the job: %w", cfg.Name, err)
	}
	if opts.CrawlReport != nil {
		rep.Write(opts.CrawlReport)
		return nil
	}
	log.Info("crawl finished", "crawler", rep.Crawler, "run_id", rep.RunID, "tables", len(rep.Tables), "files_opened", rep.FilesOpened)
	return nil
}

// Crawl crawls cfg into the state store at location.
func Crawl(ctx context.Context, cfg *crawler.Config, location string, opts crawler.Options) (*crawler.Report, error) {
	st, err := OpenState(ctx, location)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if opts.Host == "" {
		opts.Host = DefaultHostID()
	}
	return crawler.Crawl(ctx, cfg, st, opts)
}

// LineageObserver is the Observer that tells o of a run's start and end;
// Run makes one from the job's lineage configuration unless
// RunOptions.Observer is set.
func LineageObserver(o *lineage.Observer) Observer { return lineageObserver{o} }

type lineageObserver struct{ o *lineage.Observer }

func (l lineageObserver) RunStarted(ctx context.Context, ev RunEvent) {
	l.o.RunStarted(ctx, observed(ev))
}

func (l lineageObserver) RunFinished(ctx context.Context, ev RunEvent) {
	l.o.RunFinished(ctx, observed(ev))
}

// observed is what lineage is told of a run event.
func observed(ev RunEvent) lineage.Observed {
	r := ev.Result
	return lineage.Observed{Job: r.Job, RunID: r.RunID, Attempt: r.Attempt, Mode: r.Mode, Sinks: r.Sinks,
		Version: r.Version, BaseVersion: ev.BaseVersion, Err: ev.Err, Error: r.Error, Schemas: ev.Schemas}
}
