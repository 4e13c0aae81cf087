package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/serve/view"
)

func newBookmarkCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "bookmark", Short: "Inspect or reset a job's bookmark"}
	show := &cobra.Command{
		Use:   "show JOB",
		Short: "Show the bookmark: version, last run, state per source ctx",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBookmarkShow(cmd.Context(), g, args[0])
		},
	}
	show.Flags().StringVar(&g.state, "state", "", "state store location")
	show.Flags().BoolVar(&g.json, "json", false, "print JSON on stdout")
	var ro tidemark.ResetOptions
	reset := &cobra.Command{
		Use:   "reset JOB",
		Short: "Clear the bookmark, or rewind it to a run; optionally delete later output",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBookmarkReset(cmd.Context(), g, ro, args[0])
		},
	}
	reset.Flags().StringVar(&ro.ToRun, "to-run", "", "restore the bookmark exactly as this run committed it")
	reset.Flags().BoolVar(&ro.Purge, "purge-output", false, "delete what every later run published (any mode)")
	reset.Flags().BoolVar(&ro.DryRun, "dry-run", false, "print what the reset would undo and delete, changing nothing")
	reset.Flags().StringVar(&g.state, "state", "", "state store location")
	reset.Flags().BoolVar(&g.json, "json", false, "print JSON on stdout")
	c.AddCommand(show, reset)
	return c
}

// runBookmarkShow is `tidemark bookmark show`.
func runBookmarkShow(ctx context.Context, g *globals, arg string) error {
	name, st, err := openJob(ctx, g, arg, true)
	if err != nil {
		return err
	}
	defer st.Close()
	head, err := st.Head(ctx, name)
	if err != nil {
		return err
	}
	states, err := st.SourceStates(ctx, name)
	if err != nil {
		return err
	}
	v := view.BookmarkOf(name, head, states)
	if g.json {
		return json.NewEncoder(os.Stdout).Encode(v)
	}
	fmt.Printf("job %s: bookmark version %d, from run %s\n", name, v.Version, orNone(v.RunID))
	if err := printResets(ctx, st, name); err != nil {
		return err
	}
	for _, k := range sortedKeys(v.Sources) {
		s := v.Sources[k].SourceState
		if err := s.View().Show(os.Stdout, k, s); err != nil {
			return err
		}
	}
	return nil
}

// runBookmarkReset is `tidemark bookmark reset`.
func runBookmarkReset(ctx context.Context, g *globals, ro tidemark.ResetOptions, arg string) error {
	name, st, err := openJob(ctx, g, arg, false)
	if err != nil {
		return err
	}
	defer st.Close()
	ro.Logger = g.logger()
	ro.By = cliActor()
	if spec, err := job.Load(arg); err == nil && spec.Job == name {
		ro.Spec = spec // a source kind reaches what it holds outside the store (a replication slot)
	}
	if ro.HostID, err = hostID(""); err != nil {
		return err
	}
	res, err := tidemark.Reset(ctx, st, name, ro)
	if err != nil {
		if res != nil && !ro.DryRun {
			printResetSources(os.Stderr, res)
		}
		return err
	}
	if ro.DryRun {
		return printResetPreview(g, name, ro, res)
	}
	if g.json {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	if ro.ToRun != "" {
		fmt.Fprintf(os.Stderr, "job %s: bookmark rewound to run %s (version %d); %d later runs undone\n", name, ro.ToRun, res.Version, len(res.Undone))
	} else {
		fmt.Fprintf(os.Stderr, "job %s: bookmark cleared (version %d); %d runs undone\n", name, res.Version, len(res.Undone))
	}
	printResetSources(os.Stderr, res)
	if ro.Purge {
		fmt.Fprintf(os.Stderr, "purged the output of %d runs: %d files deleted\n", len(res.Purged), len(res.Deleted))
		for _, d := range res.Deleted {
			fmt.Fprintf(os.Stderr, "  deleted %s\n", d)
		}
		if len(res.Gone) > 0 {
			fmt.Fprintf(os.Stderr, "%d files of those runs were already gone from where they were published "+
				"(replaced by a later overwrite, deleted by hand, or moved with the sink folder):\n", len(res.Gone))
			for i, d := range res.Gone {
				if i == 10 {
					fmt.Fprintf(os.Stderr, "  and %d more\n", len(res.Gone)-i)
					break
				}
				fmt.Fprintf(os.Stderr, "  not found %s\n", d)
			}
		}
	}
	return nil
}

// printResetPreview prints what a reset would undo and delete: with
// --json as serve's dry run answers ({"undo","delete"}), else as lines.
func printResetPreview(g *globals, name string, ro tidemark.ResetOptions, res *tidemark.ResetResult) error {
	if g.json {
		return json.NewEncoder(os.Stdout).Encode(struct {
			Undo    []string          `json:"undo"`
			Delete  []string          `json:"delete"`
			Sources map[string]string `json:"sources,omitempty"`
		}{res.Undone, res.Deleted, res.Sources})
	}
	to := "cleared"
	if ro.ToRun != "" {
		to = "rewound to run " + ro.ToRun
	}
	fmt.Printf("job %s: the bookmark would be %s (now version %d); %d runs undone\n", name, to, res.Version, len(res.Undone))
	for _, r := range res.Undone {
		fmt.Printf("  undo %s\n", r)
	}
	if ro.Purge {
		fmt.Printf("the output of %d runs would be purged: %d outputs deleted\n", len(res.Purged), len(res.Deleted))
		for _, d := range res.Deleted {
			fmt.Printf("  delete %s\n", d)
		}
	}
	printResetSources(os.Stdout, res)
	fmt.Println("nothing was changed (--dry-run)")
	return nil
}

// printResetSources prints what the reset did (or would do) to what each
// source holds outside the state store (a replication slot), a line each.
func printResetSources(w io.Writer, res *tidemark.ResetResult) {
	for _, k := range sortedKeys(res.Sources) {
		fmt.Fprintf(w, "source %s: %s\n", k, res.Sources[k])
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
