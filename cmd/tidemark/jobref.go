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
	yamlName := strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml")
	if info, err := os.Stat(arg); err == nil && !info.IsDir() || yamlName {
		s, err := job.Load(arg)
		if err != nil && !yamlName {
			// A file in the working folder that happens to have the
			// job's name (a log, a script) does not hide the job: the
			// name is tried, and the file's error is kept for when the
			// name is no job either.
			if name, st, nerr := openJobName(ctx, g, arg, readOnly); nerr == nil {
				g.logger().Warn("a file of that name in the working folder is not a job file: taking the argument as a job name", "file", arg)
				return name, st, nil
			}
		}
		if err != nil {
			return "", nil, err
		}
		spec = s
	}
	if spec == nil {
		return openJobName(ctx, g, arg, readOnly)
	}
	return openJobSpec(ctx, g, spec.Job, spec, readOnly)
}

// openJobName opens the state of the job named name.
func openJobName(ctx context.Context, g *globals, name string, readOnly bool) (string, store.Store, error) {
	return openJobSpec(ctx, g, name, nil, readOnly)
}

// openJobSpec opens the existing state of job name (of job file spec, or
// nil for a bare name).
func openJobSpec(ctx context.Context, g *globals, name string, spec *job.Spec, readOnly bool) (string, store.Store, error) {
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
	runs, err := st.Runs(ctx, name, store.RunQuery{Limit: 1})
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
