package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark/serve/view"
	"github.com/tidemark-etl/tidemark/store"
)

func newRunsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "runs JOB",
		Short: "Show a job's run history, newest first",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRuns(cmd.Context(), g, args[0])
		},
	}
	c.Flags().StringVar(&g.state, "state", "", "state store location")
	c.Flags().BoolVar(&g.json, "json", false, "print JSON on stdout")
	return c
}

// runRuns is `tidemark runs`.
func runRuns(ctx context.Context, g *globals, arg string) error {
	name, st, err := openJob(ctx, g, arg, true)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := store.AllRuns(ctx, st, name)
	if err != nil {
		return err
	}
	out := view.Results(runs)
	if g.json {
		return json.NewEncoder(os.Stdout).Encode(out)
	}
	if len(out) == 0 {
		fmt.Printf("job %s has no runs\n", name)
		return nil
	}
	fmt.Printf("%-24s %-8s %-10s %5s %8s %10s %8s  %-19s  %s\n", "RUN", "MODE", "STATUS", "TRY", "FILES", "ROWS", "VERSION", "STARTED", "HOST")
	var undone, purged bool
	for _, r := range out {
		var files, rows int64
		for _, c := range r.Sources {
			if c.View().PartsAreFiles() { // a table's parts are no files; its rows are below
				files += c.Files
			}
			rows += c.Rows
		}
		status := r.Status
		switch {
		case r.Purged:
			status += "**"
			purged = true
		case r.Undone:
			status += "*"
			undone = true
		}
		fmt.Printf("%-24s %-8s %-10s %5d %8d %10d %8d  %-19s  %s\n", r.RunID, r.Mode, status, r.Attempt, files, rows, r.Version,
			r.StartedAt.Local().Format(time.DateTime), r.Host)
		for _, k := range sortedKeys(r.Sources) {
			c := r.Sources[k]
			before, _ := c.View().Notes(c)
			for _, n := range before {
				fmt.Printf("    source %s: %s\n", k, n)
			}
		}
		if r.Error != "" {
			fmt.Printf("    error: %s\n", r.Error)
		}
		for _, k := range sortedKeys(r.Sources) {
			c := r.Sources[k]
			_, after := c.View().Notes(c)
			for _, n := range after {
				fmt.Printf("    source %s: %s\n", k, n)
			}
		}
	}
	if undone || purged {
		fmt.Println()
	}
	if undone {
		fmt.Println("*  undone: a later `bookmark reset` cleared or rewound the bookmark past this run, so its input is read again; its output was kept")
	}
	if purged {
		fmt.Println("** undone and purged: as *, and `bookmark reset --purge-output` deleted the output it published")
	}
	return nil
}
