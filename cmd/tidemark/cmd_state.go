package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/crawler"
	"github.com/tidemark-etl/tidemark/statecopy"
	"github.com/tidemark-etl/tidemark/store"
)

// stateCopyOptions are the flags of state copy.
type stateCopyOptions struct {
	from, to, job string
}

func newStateCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "state", Short: "Manage state stores"}
	o := &stateCopyOptions{}
	cp := &cobra.Command{
		Use:   "copy --from URL --to URL [--job JOB]",
		Short: "Copy jobs' whole state (every version, run and manifest) to another state store",
		Long: "Copy a job's whole state — every bookmark version, every run with its input and output manifests, " +
			"and the published, purged and undone marks, but no lease — from one state store to another, " +
			"for example from SQLite to PostgreSQL or S3, so that the job goes on there without reprocessing. " +
			"Without --job every job of the source is copied; with it, the job and its crawler's bookmark. The destination must hold no state of a copied job. " +
			"The data catalog goes along (every table with its versions and partitions), whatever --job says; " +
			"a table the destination already has is left as it is. " +
			"Copy while no run of the job is going on, then point the job file's state: at the destination.",
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStateCopy(cmd.Context(), g, o)
		},
	}
	cp.Flags().StringVar(&o.from, "from", "", "the state store to copy from (a path or URL)")
	cp.Flags().StringVar(&o.to, "to", "", "the state store to copy to (a path or URL; made if absent)")
	cp.Flags().StringVar(&o.job, "job", "", "the job to copy (default: every job of the source)")
	cp.Flags().BoolVar(&g.json, "json", false, "print what was copied as JSON on stdout")
	c.AddCommand(cp)
	return c
}

// runStateCopy is `tidemark state copy`.
func runStateCopy(ctx context.Context, g *globals, o *stateCopyOptions) error {
	if o.from == "" || o.to == "" {
		return usageError{errors.New("state copy needs --from and --to")} // a flag error: the hint says --help
	}
	from, err := store.OpenExisting(ctx, o.from, true)
	if err != nil {
		return stateOpenError("source", o.from, err)
	}
	defer from.Close()
	jobs, err := copyJobs(ctx, from, o)
	if err != nil {
		return err
	}
	to, err := store.Open(ctx, o.to)
	if err != nil {
		return stateOpenError("destination", o.to, err)
	}
	defer to.Close()
	if fid, err1 := from.Identity(ctx); err1 == nil {
		if tid, err2 := to.Identity(ctx); err2 == nil && fid.ID == tid.ID {
			return refused{fmt.Errorf("state copy: --from %s and --to %s are the same state store (id %s)",
				store.Redact(o.from), store.Redact(o.to), fid.ID)}
		}
	}
	if _, ok := to.(store.Importer); !ok {
		return refused{fmt.Errorf("state copy: the state store %s cannot import a job's history (%T has no import)",
			store.Redact(o.to), to)}
	}
	// Every job is checked before any is written.
	for _, job := range jobs {
		if err := copyable(ctx, from, to, job, o); err != nil {
			return err
		}
	}
	// The catalog first: a copy retried after a failure that left some
	// jobs copied finds the tables there and keeps them.
	cat, err := statecopy.CopyCatalog(ctx, from, to)
	if err != nil {
		return fmt.Errorf("copying the catalog from %s to %s: %w", store.Redact(o.from), store.Redact(o.to), err)
	}
	if cat.Tables > 0 || cat.Partitions > 0 {
		fmt.Fprintf(os.Stderr, "copied the catalog: %d tables, %d partitions\n", cat.Tables, cat.Partitions)
	}
	if len(cat.Kept) > 0 {
		fmt.Fprintf(os.Stderr, "catalog tables %s already has, left as they are: %s\n", store.Redact(o.to), strings.Join(cat.Kept, ", "))
	}
	var sums []statecopy.Summary
	for _, job := range jobs {
		sum, err := statecopy.Copy(ctx, from, to, job)
		if err != nil {
			return fmt.Errorf("copying job %q from %s to %s: %w", job, store.Redact(o.from), store.Redact(o.to), err)
		}
		sums = append(sums, sum)
		fmt.Fprintf(os.Stderr, "copied job %s: %d versions (head %d), %d runs, %d file records, %d key ranges, %d outputs\n",
			job, sum.Versions, sum.Head, sum.Runs, sum.Files, sum.Ranges, sum.Outputs)
	}
	fmt.Fprintf(os.Stderr, "copied %d jobs from %s to %s; point their job files' state: at %s before they run again\n",
		len(sums), store.Redact(o.from), store.Redact(o.to), store.Redact(o.to))
	if g.json {
		if sums == nil {
			sums = []statecopy.Summary{}
		}
		return json.NewEncoder(os.Stdout).Encode(sums)
	}
	return nil
}

// copyJobs is the jobs to copy: --job, or every job of the source.
func copyJobs(ctx context.Context, from store.Store, o *stateCopyOptions) ([]string, error) {
	lister, ok := from.(store.JobLister)
	if o.job != "" {
		if ok {
			jobs, err := lister.Jobs(ctx)
			if err != nil {
				return nil, fmt.Errorf("listing the jobs of %s: %w", store.Redact(o.from), err)
			}
			if slices.Contains(jobs, o.job) {
				// The job's own crawler keeps its bookmark under a name of
				// its own: it goes along, or the next crawl would read every
				// file again.
				if cj := crawler.JobOf(o.job); slices.Contains(jobs, cj) {
					return []string{o.job, cj}, nil
				}
				return []string{o.job}, nil
			}
			return nil, &unknownJobError{job: o.job, location: store.Redact(o.from), origin: "--from", known: jobs}
		}
		return []string{o.job}, nil
	}
	if !ok {
		return nil, refused{fmt.Errorf("state copy: the state store %s cannot list its jobs; name one with --job", store.Redact(o.from))}
	}
	jobs, err := lister.Jobs(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the jobs of %s: %w", store.Redact(o.from), err)
	}
	if len(jobs) == 0 {
		return nil, refused{fmt.Errorf("state copy: the state store %s holds no jobs", store.Redact(o.from))}
	}
	return jobs, nil
}

// copyable refuses a job that a run is using in the source (its lease is
// held by a live process) or that already has state in the destination.
func copyable(ctx context.Context, from, to store.Store, job string, o *stateCopyOptions) error {
	if lr, ok := from.(store.LeaseReader); ok {
		l, held, err := lr.CurrentLease(ctx, job)
		if err != nil {
			return fmt.Errorf("reading the lease of job %q in %s: %w", job, store.Redact(o.from), err)
		}
		host, err := hostID("")
		if err != nil {
			return err
		}
		// A run killed on this machine leaves its lease held until it
		// expires; a run takes it over at once, and so may a copy: the
		// dead run's record is copied as running, and the first run from
		// the copy marks it failed and deletes what it staged.
		if held && !tidemark.HolderGone(l.Holder, host) {
			return &store.LeaseHeldError{Job: job, Token: l.Token, Holder: l.Holder, Expires: l.Expires}
		}
	}
	if err := statecopy.CheckDestination(ctx, to, job); err != nil {
		if errors.Is(err, store.ErrJobExists) {
			return refused{fmt.Errorf("state copy into %s: %w; a copy writes only into a store that holds nothing of the job, "+
				"so nothing was copied", store.Redact(o.to), err)}
		}
		return fmt.Errorf("state copy into %s: %w", store.Redact(o.to), err)
	}
	return nil
}

// refused is a copy refused before anything was written: exit 2, like a
// usage error, without the hint to read --help.
type refused struct{ err error }

func (e refused) Error() string        { return e.err.Error() }
func (e refused) Unwrap() error        { return e.err }
func (e refused) Is(target error) bool { return target == tidemark.ErrUsage }

// stateOpenError names which store could not be opened.
func stateOpenError(which, loc string, err error) error {
	err = fmt.Errorf("opening the %s state store %s: %w", which, store.Redact(loc), err)
	if errors.Is(err, store.ErrNoState) {
		return refused{err}
	}
	return err
}
