package tidemark

import (
	"context"
	"errors"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// SourcePreview is what the next run would read of one source.
type SourcePreview = source.Preview

// PlanResult is `tidemark plan`'s answer.
type PlanResult struct {
	Job     string                   `json:"job"`
	Mode    bookmark.Mode            `json:"mode"`
	Version int64                    `json:"version"`
	Sources map[string]SourcePreview `json:"sources"`
}

// Plan says what the next run would read; it changes nothing and takes no
// lease. It opens the state store read-only (so it works on a read-only
// state folder) and creates none: with no store yet, it plans the job's
// first run and logs a warning that names where it looked.
func Plan(ctx context.Context, spec *job.Spec, opts RunOptions) (*PlanResult, error) {
	if err := opts.defaults(spec); err != nil {
		return nil, err
	}
	jobName := spec.Job
	if opts.JobName != "" {
		jobName = opts.JobName
	}
	loc, origin := StateOrigin(opts.State, spec)
	if err := checkSinkPaths(spec, loc); err != nil {
		return nil, err
	}
	st, err := OpenExistingState(ctx, opts.State, spec, true)
	if errors.Is(err, store.ErrNoState) {
		opts.Logger.Warn("no state store yet: planning the job's first run", "state", store.Redact(loc), "chosen", origin)
		st, err = noState{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, none := st.(noState); !none {
		// A store that holds other jobs only: this job never ran either.
		runs, err := st.Runs(ctx, jobName, store.RunQuery{Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			opts.Logger.Warn("the job has no state yet: planning its first run", "job", jobName,
				"state", store.Redact(loc), "chosen", origin)
		}
	}
	head, err := st.Head(ctx, jobName)
	if err != nil {
		return nil, err
	}
	states, err := st.SourceStates(ctx, jobName)
	if err != nil {
		return nil, err
	}
	var rangeIDs []string
	if opts.From != "" {
		if rangeIDs, err = rangeRuns(ctx, st, jobName, opts.From, opts.To); err != nil {
			return nil, err
		}
	}
	res := &PlanResult{Job: jobName, Mode: opts.Mode, Version: head.Version, Sources: map[string]SourcePreview{}}
	now := opts.now()
	for _, spec1 := range spec.Sources {
		src, err := source.Open(ctx, spec, spec1)
		if err != nil {
			return nil, err
		}
		// A sink inside a catalog source's folders is refused as run
		// refuses it.
		if rv, ok := src.(source.Resolver); ok {
			err := rv.Resolve(ctx, st)
			if err == nil {
				err = checkCatalogSinks(ctx, spec, []source.Source{src}, st)
			}
			if err != nil {
				src.Close()
				return nil, err
			}
		}
		prev, has := states[spec1.Ctx]
		p, err := src.Plan(ctx, source.Request{Job: jobName, Mode: opts.Mode, State: st, Catalog: st, Prev: prev, HasPrev: has,
			RangeRuns: rangeIDs, AllowChange: opts.AllowSourceChange, Now: now, Count: true})
		if err != nil {
			src.Close()
			return nil, err
		}
		res.Sources[spec1.Ctx] = p.Preview()
		src.Close()
	}
	return res, nil
}
