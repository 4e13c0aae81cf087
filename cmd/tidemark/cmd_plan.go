package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source/sqltable"
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
		s := res.Sources[k]
		if s.Table || s.Rows > 0 || s.UpTo != nil {
			switch {
			case s.UpTo == nil:
				fmt.Printf("source %s (SQL table): nothing new to read", k)
				if s.After != nil {
					fmt.Printf(" after keys (%s)", strings.Join(s.After, ", "))
				}
			case s.After == nil:
				fmt.Printf("source %s (SQL table): %d rows to read, keys from the start up to (%s)", k, s.Rows, strings.Join(s.UpTo, ", "))
			default:
				fmt.Printf("source %s (SQL table): %d rows to read, keys after (%s) up to (%s)",
					k, s.Rows, strings.Join(s.After, ", "), strings.Join(s.UpTo, ", "))
			}
			if regressionCheckOff(spec, k) {
				fmt.Printf(", regression check off (regression_check: false)\n")
			} else {
				fmt.Printf(", %d regressions\n", s.Regressions)
			}
			continue
		}
		fmt.Printf("source %s: %d files to read (%s), %d unchanged, %d modified, %d left for later runs\n",
			k, s.Files, humanize.IBytes(uint64(s.Bytes)), s.Unchanged, s.Modified, s.Deferred)
		if s.RootMissing {
			fmt.Printf("  the folder does not exist yet (allow_missing: true)\n")
		}
		for _, w := range s.Warnings {
			fmt.Printf("  warning: %s\n", w)
		}
		if s.InSinks > 0 {
			fmt.Printf("  (%d files in tidemark sink folders below the source are not read)\n", s.InSinks)
		}
		for _, f := range s.New {
			fmt.Printf("  %s\n", f)
		}
	}
	return nil
}

// regressionCheckOff says the job turns the regression check of source
// ctx off: plan then counts none, which is not "0 regressions".
func regressionCheckOff(spec *job.Spec, ctx string) bool {
	for _, src := range spec.Sources {
		if c, ok := src.Config.(*sqltable.JobConfig); ok && src.Ctx == ctx {
			return c.RegressionCheck != nil && !*c.RegressionCheck
		}
	}
	return false
}
