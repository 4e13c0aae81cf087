package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// openJob resolves JOB (a job file path or a bare job name) to its name and
// opens its existing state store (read-only for commands that only read).
// No state store there, or one that holds nothing of the job, is a usage
// error that says where the state was looked for and why there: these
// commands never create state.
func openJob(ctx context.Context, g *globals, arg string, readOnly bool) (string, store.Store, error) {
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
	st, err := tidemark.OpenExistingState(ctx, g.state, spec, readOnly)
	if err != nil {
		return "", nil, err
	}
	if err := knownJob(ctx, st, name, g.state, spec); err != nil {
		st.Close()
		return "", nil, err
	}
	return name, st, nil
}

// unknownJobError is a job of which the state store holds nothing.
type unknownJobError struct {
	job, location, origin string
	known                 []string
}

func (e *unknownJobError) Error() string {
	msg := fmt.Sprintf("job %q has no state in %s (%s)", e.job, e.location, e.origin)
	if len(e.known) > 0 {
		msg += "; jobs there: " + strings.Join(e.known, ", ")
	} else {
		msg += "; it holds no jobs"
	}
	return msg + "; check the job name and --state"
}

// Is makes an unknown job a usage error (exit 2).
func (e *unknownJobError) Is(target error) bool { return target == tidemark.ErrUsage }

// knownJob checks that the store holds runs or a bookmark of the job.
func knownJob(ctx context.Context, st store.Store, name, flag string, spec *job.Spec) error {
	head, err := st.Head(ctx, name)
	if err != nil {
		return err
	}
	if head.Version > 0 {
		return nil
	}
	runs, err := st.Runs(ctx, name)
	if err != nil {
		return err
	}
	if len(runs) > 0 {
		return nil
	}
	loc, origin := tidemark.StateOrigin(flag, spec)
	e := &unknownJobError{job: name, location: store.Redact(loc), origin: origin}
	if l, ok := st.(store.JobLister); ok {
		e.known, _ = l.Jobs(ctx)
	}
	return e
}
