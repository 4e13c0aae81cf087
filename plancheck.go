package tidemark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
)

// checkPrefix names the views checkQueries adds: one per sink, no rows.
const checkPrefix = "_tidemark_check_"

// checkQueries has the engine define the job's transforms over the first
// file plan would read of each source, and describe what each sink would
// read, so that `tidemark plan` finds an unknown column or a SQL error in a
// transform, or a partition_by column the rows lack, before a run does:
// each is a *job.Error at its key and line (exit 2). No row is written:
// each sink reads its view with LIMIT 0, into a temporary folder. It
// checks nothing when a source has nothing new (the run would not run the
// SQL either) or cannot be sampled by file (a SQL table), and lets a bad
// input pass: the run reports it, naming file and line.
func checkQueries(ctx context.Context, spec *job.Spec, opts RunOptions, plans []source.Plan) error {
	if len(spec.Transforms) == 0 && !slices.ContainsFunc(spec.Sinks, func(k job.Sink) bool { return len(k.Strings("partition_by")) > 0 }) {
		return nil
	}
	var samples []source.Plan
	for _, p := range plans {
		sp, ok := p.(source.Splitter)
		if files, _ := p.Size(); !ok || files == 0 {
			return nil
		}
		head, _ := sp.Split(1)
		samples = append(samples, head)
	}
	tmp, err := os.MkdirTemp("", "tidemark-plan-")
	if err != nil {
		return fmt.Errorf("checking the job's SQL: %w", err)
	}
	defer os.RemoveAll(tmp)
	eng, err := engine.Open(spec.Engine, engine.Env{})
	if err != nil {
		return err
	}
	defer eng.Close()
	env := source.Env{Caps: eng.Capabilities(), Policy: engine.BadFail, TempDir: func() (string, error) {
		dir := filepath.Join(tmp, "in")
		return dir, os.MkdirAll(dir, 0o700)
	},
		Concurrency: spec.IO.Concurrency, Log: opts.Logger}
	plan := engine.Plan{OnBadRecord: engine.BadFail}
	var reads []source.Reading
	for _, p := range samples {
		rd, err := p.Open(ctx, env)
		if err != nil {
			for _, r := range reads {
				_, _ = r.Done(ctx, err, engine.SourceResult{}, true)
			}
			return err
		}
		reads = append(reads, rd)
		plan.Sources = append(plan.Sources, rd.Input())
	}
	for _, t := range spec.Transforms {
		plan.Transforms = append(plan.Transforms, engine.Transform{Name: t.Key.(string), SQL: t.Value.(string)})
	}
	for i, k := range spec.Sinks {
		view := fmt.Sprintf("%s%d", checkPrefix, i)
		plan.Transforms = append(plan.Transforms, engine.Transform{Name: view, SQL: "SELECT * FROM " + k.From + " LIMIT 0"})
		plan.Sinks = append(plan.Sinks, engine.Sink{Ctx: k.Ctx, From: view, Format: "csv",
			Location: filepath.Join(tmp, "out", fmt.Sprint(i))})
	}
	res, err := eng.Execute(ctx, plan)
	for _, rd := range reads {
		_, _ = rd.Done(ctx, err, engine.SourceResult{}, true)
	}
	var ie *engine.InputError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return err
	case errors.As(err, &ie):
		opts.Logger.Warn("the job's SQL was not checked: its sample input is bad", "err", err)
		return nil
	default:
		return sqlError(spec, err)
	}
	for i, k := range spec.Sinks {
		schema := res.Sinks[k.Ctx].Schema
		if schema == nil {
			continue // the engine does not tell
		}
		var cols []string
		for _, c := range schema {
			cols = append(cols, c.Name)
		}
		for _, p := range k.Strings("partition_by") {
			if job.Identifier(p) && !slices.ContainsFunc(cols, func(c string) bool { return strings.EqualFold(c, p) }) {
				return job.Errors{spec.ErrorAt(fmt.Sprintf("$.sinks[%d].partition_by", i),
					"%q is not a column of %s (its columns: %s)", p, k.From, strings.Join(cols, ", "))}
			}
		}
	}
	return nil
}

// sqlError places the engine's error in the job file: at the transform it
// names, else at transforms:.
func sqlError(spec *job.Spec, err error) error {
	msg := err.Error()
	for _, t := range spec.Transforms {
		name := t.Key.(string)
		if strings.Contains(msg, "transform "+name+":") || strings.Contains(msg, "transform "+name+" ") {
			return job.Errors{spec.ErrorAt("$.transforms."+name, "%s", strings.TrimPrefix(msg, "transform "+name+": "))}
		}
	}
	for i := range spec.Sinks {
		if strings.Contains(msg, fmt.Sprintf("%s%d", checkPrefix, i)) {
			return job.Errors{spec.ErrorAt(fmt.Sprintf("$.sinks[%d].from", i), "%s", msg)}
		}
	}
	return job.Errors{spec.ErrorAt("$.transforms", "checking the SQL on a sample of the input: %s", msg)}
}
