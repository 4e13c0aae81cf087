package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
)

func newPlanCmd(g *globals) *cobra.Command {
	o := &runOptions{}
	c := &cobra.Command{
		Use:   "plan JOBFILE",
		Short: "Show what the next run would read; changes nothing",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd.Context(), g, o, args[0])
		},
	}
	o.flags(c, true)
	c.Flags().StringVar(&g.state, "state", "", "state store location")
	c.Flags().BoolVar(&g.json, "json", false, "print JSON on stdout")
	return c
}

// runPlan is `tidemark plan`.
func runPlan(ctx context.Context, g *globals, o *runOptions, path string) error {
	spec, err := job.Load(path)
	if err != nil {
		return err
	}
	ro, err := o.library(g)
	if err != nil {
		return err
	}
	ro.Logger = g.logger()
	res, err := tidemark.Plan(ctx, spec, ro)
	if err != nil {
		return err
	}
	if g.json {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("job %s, mode %s, bookmark version %d\n", res.Job, res.Mode, res.Version)
	for _, k := range sortedKeys(res.Sources) {
		if err := res.Sources[k].Show(os.Stdout, k); err != nil {
			return err
		}
	}
	return nil
}
