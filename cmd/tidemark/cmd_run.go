package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// runOptions are the flags of run and plan.
type runOptions struct {
	mode        string
	from, to    string
	jobName     string
	allowChange bool
	adoptSink   bool
	// metricsFile (run only) receives the job's metrics after the run.
	metricsFile string
	// hostID (run only) names this host in the lease and the run record.
	hostID string
	// leaseTTL (run only) is how long the lease lives without renewal.
	leaseTTL time.Duration
}

func (o *runOptions) flags(c *cobra.Command, withRange bool) {
	c.Flags().StringVar(&o.mode, "job-bookmark-option", "", "bookmark mode: enable, disable or pause (Glue's job-bookmark-* spellings too)")
	if withRange {
		c.Flags().StringVar(&o.from, "job-bookmark-from", "", "with pause: re-read the input of the runs after this one...")
		c.Flags().StringVar(&o.to, "job-bookmark-to", "", "...up to and including this one")
	}
	c.Flags().StringVar(&o.jobName, "JOB_NAME", "", "job name, overriding the job file's job: (Glue's --JOB_NAME)")
	c.Flags().BoolVar(&o.allowChange, "allow-source-change", false, "keep bookmarks of sources whose path, format or options changed")
}

func (o *runOptions) library(g *globals) (tidemark.RunOptions, error) {
	ro := tidemark.RunOptions{From: o.from, To: o.to, State: g.state, JobName: o.jobName, AllowSourceChange: o.allowChange,
		AdoptSink: o.adoptSink, LeaseTTL: o.leaseTTL}
	id, err := hostID(o.hostID)
	if err != nil {
		return ro, err
	}
	ro.HostID = id
	if ro.Now, err = skewedClock(); err != nil {
		return ro, err
	}
	if o.leaseTTL < 0 || (o.leaseTTL > 0 && o.leaseTTL < time.Second) {
		return ro, usageError{fmt.Errorf("--lease-ttl %s: want at least 1s", o.leaseTTL)}
	}
	if o.mode != "" {
		m, err := bookmark.ParseMode(o.mode)
		if err != nil {
			return ro, usageError{err}
		}
		ro.Mode = m
	}
	return ro, nil
}

func newRunCmd(g *globals) *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "run JOBFILE",
		Short: "Run a job: read what is new since its bookmark, write the sinks, advance the bookmark",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), g, o, args[0])
		},
	}
	o.flags(c, true)
	c.Flags().BoolVar(&o.adoptSink, "adopt-sink", false, "make this job and state store the owner of its sink locations, "+
		"whatever their _tidemark/owner.json says (hand a location over, or start a new history after a lost state)")
	c.Flags().StringVar(&g.state, "state", "", "state store location (overrides the job file's state:)")
	c.Flags().BoolVar(&g.json, "json", false, "print the run summary as JSON on stdout")
	c.Flags().StringVar(&o.hostID, "host-id", "", "this host's identity in the job's lease and run record "+
		"(default: $"+hostIDEnv+", else hostname:pid)")
	c.Flags().DurationVar(&o.leaseTTL, "lease-ttl", 0, "how long the job's lease lives without renewal (renewed every third of it; "+
		"a holder that stalls longer loses it to the next run)")
	c.Flags().StringVar(&o.metricsFile, "metrics-file", "", "after the run, write the job's metrics to this file "+
		"(Prometheus textfile-collector format, replaced atomically; a failure to write is only a warning)")
	return c
}

// runRun is `tidemark run`.
func runRun(ctx context.Context, g *globals, o *runOptions, path string) error {
	log := g.logger()
	spec, res, err := runJob(ctx, g, o, path, log)
	if o.metricsFile != "" {
		writeMetricsFile(ctx, g, o, spec, res, o.metricsFile, log)
	}
	out := runOutputOf(spec, o, res, err)
	if g.json {
		g.jsonDone = true
		if jerr := json.NewEncoder(os.Stdout).Encode(out); jerr != nil && err == nil {
			return jerr
		}
	}
	switch {
	case g.logFormat == "json":
		attrs := []any{"run_id", out.RunID, "status", out.Status, "mode", out.Mode,
			"attempt", out.Attempt, "duration_ms", out.DurationMS, "sources", out.Sources, "sinks", out.Sinks,
			"exit_code", out.ExitCode}
		if err != nil {
			attrs = append(attrs, "error", out.Error, "error_kind", out.ErrorKind)
			if out.Holder != nil {
				attrs = append(attrs, "holder", out.Holder)
			}
			log.Error("run finished", attrs...)
		} else {
			log.Info("run finished", attrs...)
		}
	case res != nil:
		printSummary(res)
	}
	return err
}

// runJob loads the job file and runs it; res is nil when the run was not
// begun (a usage or job-file error, a held lease).
func runJob(ctx context.Context, g *globals, o *runOptions, path string, log *slog.Logger) (*job.Spec, *tidemark.Result, error) {
	spec, err := job.Load(path)
	if err != nil {
		return nil, nil, err
	}
	ro, err := o.library(g)
	if err != nil {
		return spec, nil, err
	}
	ro.Logger = log
	if g.logFormat != "json" { // a bar is not a JSON line
		ro.Progress = newProgress(os.Stderr)
	}
	if g.logFormat != "json" { // else one "crawl finished" line
		ro.CrawlReport = os.Stderr
	}
	res, err := tidemark.Run(ctx, spec, ro)
	return spec, res, err
}

// runOutput is run --json: the contract's summary, on every exit. On exit
// 1, 2 and 3 it has status failed, exit_code and error, with error_kind,
// and on 3 the holder of the lease.
type runOutput struct {
	tidemark.Result
	ExitCode  int          `json:"exit_code"`
	ErrorKind string       `json:"error_kind,omitempty"`
	Holder    *leaseHolder `json:"holder,omitempty"`
}

// leaseHolder is who holds a job's lease (run --json on exit 3).
type leaseHolder struct {
	RunID   string    `json:"run_id"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Expires time.Time `json:"expires"`
}

// runOutputOf is the run's summary, or the failure of a run that was not
// begun (res nil).
func runOutputOf(spec *job.Spec, o *runOptions, res *tidemark.Result, err error) runOutput {
	var out runOutput
	if res != nil {
		out.Result = *res
	} else {
		out.Result = tidemark.Result{Status: store.StatusFailed, Sources: map[string]store.Count{}, Sinks: map[string]store.Count{}}
		if spec != nil {
			out.Job = spec.Job
			if m, merr := bookmark.ParseMode(spec.Bookmark); merr == nil {
				out.Mode = m
			}
		}
		if o.jobName != "" {
			out.Job = o.jobName
		}
		if m, merr := bookmark.ParseMode(o.mode); o.mode != "" && merr == nil {
			out.Mode = m
		}
	}
	if err == nil {
		return out
	}
	out.Status = store.StatusFailed
	out.Error = err.Error()
	out.ExitCode = exitCode(err)
	out.ErrorKind = errorKind(err)
	var held *store.LeaseHeldError
	if errors.As(err, &held) {
		out.Holder = &leaseHolder{RunID: held.Holder.ID, Host: held.Holder.Host, PID: held.Holder.PID,
			Started: held.Holder.Started, Expires: held.Expires}
	}
	return out
}

// printSummary writes the human run summary on stderr.
func printSummary(r *tidemark.Result) {
	fmt.Fprintf(os.Stderr, "run %s of %s: %s (mode %s, attempt %d, %d ms)\n", r.RunID, r.Job, r.Status, r.Mode, r.Attempt, r.DurationMS)
	for _, k := range sortedKeys(r.Sources) {
		c := r.Sources[k]
		fmt.Fprintf(os.Stderr, "  source %s: %s\n", k, c.View().Summary(c))
	}
	for _, k := range sortedKeys(r.Sinks) {
		c := r.Sinks[k]
		fmt.Fprintf(os.Stderr, "  sink %s: %d files, %d rows\n", k, c.Files, c.Rows)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
