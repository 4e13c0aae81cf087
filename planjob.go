package tidemark

import (
	"context"
	"errors"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// SourcePreview is what the next run would read of one source.
type SourcePreview struct {
	Files     int64    `json:"files"`
	Bytes     int64    `json:"bytes"`
	New       []string `json:"new"`
	Modified  int64    `json:"modified"`
	Unchanged int64    `json:"unchanged"`
	Deferred  int64    `json:"deferred"`
	// InSinks counts the files left unread because they lie in a tidemark
	// sink's folder below the source's root.
	InSinks int64 `json:"in_sinks,omitempty"`
	// SQL table sources (Table): rows the next run would read (new and
	// late), the key range, and rows seen behind the mark.
	Table       bool     `json:"table,omitempty"`
	Rows        int64    `json:"rows,omitempty"`
	After       []string `json:"after,omitempty"`
	UpTo        []string `json:"up_to,omitempty"`
	Regressions int64    `json:"regressions,omitempty"`
	// Future counts the files to read from the future (timestamp
	// tracking); RootMissing says the folder does not exist yet
	// (allow_missing: true); Warnings are what the run would warn about.
	Future      int64    `json:"future,omitempty"`
	RootMissing bool     `json:"root_missing,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

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
		runs, err := st.Runs(ctx, jobName)
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
	in := planInput{mode: opts.Mode, states: states, allowDrift: opts.AllowSourceChange, now: time.Now(), count: true}
	if opts.From != "" {
		if in.rangeRuns, err = rangeRuns(ctx, st, jobName, opts.From, opts.To); err != nil {
			return nil, err
		}
	}
	res := &PlanResult{Job: jobName, Mode: opts.Mode, Version: head.Version, Sources: map[string]SourcePreview{}}
	for _, src := range spec.Sources {
		p, err := planSource(ctx, st, jobName, spec, src, in)
		if err != nil {
			return nil, err
		}
		if t := p.table; t != nil {
			pv := SourcePreview{New: []string{}, Table: true}
			if t.plan != nil {
				pv.Rows, pv.After, pv.UpTo, pv.Regressions = t.plan.NewRows+t.plan.Late, t.plan.From, t.plan.To, t.plan.Regressions
			}
			t.src.Close()
			res.Sources[src.Ctx] = pv
			continue
		}
		pv := SourcePreview{Files: int64(len(p.Take)), Bytes: p.Bytes(), New: []string{},
			Modified: p.Modified, Unchanged: p.Unchanged, Deferred: p.Deferred,
			Future: p.Future, RootMissing: p.RootMissing, Warnings: p.Warnings, InSinks: p.src.inSinks}
		for _, f := range p.Take {
			pv.New = append(pv.New, f.Path)
		}
		res.Sources[src.Ctx] = pv
	}
	return res, nil
}
