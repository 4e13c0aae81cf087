package main

import (
	"context"
	"os"
	"strings"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// openJob resolves JOB (a job file path or a bare job name) to its name and
// opens its state store.
func openJob(ctx context.Context, g *globals, arg string) (string, store.Store, error) {
	var spec *job.Spec
	if info, err := os.Stat(arg); err == nil && !info.IsDir() || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		s, err := job.Load(arg)
		if err != nil {
			return "", nil, err
		}
		spec = s
	}
	name := arg
	if spec != nil {
		name = spec.Job
	}
	st, err := tidemark.OpenState(ctx, tidemark.StateLocation(g.state, spec))
	if err != nil {
		return "", nil, err
	}
	return name, st, nil
}
