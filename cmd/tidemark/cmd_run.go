package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
)

// runOptions are the flags of run and plan.
type runOptions struct {
	mode        string
	from, to    string
	jobName     string
	allowChange bool
	adoptSink   bool
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
		AdoptSink: o.adoptSink}
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
	return c
}

// runRun is `tidemark run`.
func runRun(ctx context.Context, g *globals, o *runOptions, path string) error {
	spec, err := job.Load(path)
	if err != nil {
		return err
	}
	ro, err := o.library(g)
	if err != nil {
		return err
	}
	log := g.logger()
	ro.Logger = log
	ro.Progress = newProgress(os.Stderr)
	res, err := tidemark.Run(ctx, spec, ro)
	if res != nil {
		if g.json {
			enc := json.NewEncoder(os.Stdout)
			if jerr := enc.Encode(res); jerr != nil {
				return jerr
			}
		}
		if g.logFormat == "json" {
			log.Info("run finished", "run_id", res.RunID, "status", res.Status, "mode", res.Mode,
				"attempt", res.Attempt, "duration_ms", res.DurationMS, "sources", res.Sources, "sinks", res.Sinks)
		} else {
			printSummary(res)
		}
	}
	return err
}

// printSummary writes the human run summary on stderr.
func printSummary(r *tidemark.Result) {
	fmt.Fprintf(os.Stderr, "run %s of %s: %s (mode %s, attempt %d, %d ms)\n", r.RunID, r.Job, r.Status, r.Mode, r.Attempt, r.DurationMS)
	for _, k := range sortedKeys(r.Sources) {
		c := r.Sources[k]
		line := fmt.Sprintf("  source %s: %d files, %s, %d rows", k, c.Files, humanize.IBytes(uint64(c.Bytes)), c.Rows)
		if c.Rejected > 0 {
			line += fmt.Sprintf(", %d bad rows set aside", c.Rejected)
		}
		if c.Empty > 0 {
			line += fmt.Sprintf(", %d empty files", c.Empty)
		}
		if c.Deferred > 0 {
			line += fmt.Sprintf(", %d files left for later runs", c.Deferred)
		}
		if c.Missing > 0 {
			line += fmt.Sprintf(", %d files vanished before reading", c.Missing)
		}
		if c.ChangedDuringRead > 0 {
			line += fmt.Sprintf(", %d files changed while read (left for the next run)", c.ChangedDuringRead)
		}
		fmt.Fprintln(os.Stderr, line)
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
