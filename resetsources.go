package tidemark

import (
	"context"
	"fmt"
	"slices"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/source"
	"github.com/tidemark-etl/tidemark/store"
)

// resetStates are a job's source states before a reset (now) and those
// the reset restores (after: run toRun's version; none when it clears).
type resetStates struct {
	now, after map[string]bookmark.SourceState
}

// readResetStates reads the states before a reset to toRun ("" clears).
func readResetStates(ctx context.Context, st store.Store, jobName string, runs []store.Run, toRun string) (resetStates, error) {
	var rs resetStates
	var err error
	if rs.now, err = st.SourceStates(ctx, jobName); err != nil {
		return rs, fmt.Errorf("reading the bookmark's source states: %w", err)
	}
	rs.after = map[string]bookmark.SourceState{}
	for _, r := range runs {
		if toRun != "" && r.RunID == toRun && r.Version > 0 {
			if rs.after, err = st.SourceStatesAt(ctx, jobName, r.Version); err != nil {
				return rs, fmt.Errorf("reading the source states of version %d: %w", r.Version, err)
			}
		}
	}
	return rs, nil
}

// resetSources asks each source's kind what the reset does to what the
// source holds outside the state store (source.Resetter: a replication
// slot), for every ctx of the states before and after the reset and of
// the job file (spec; nil when given the job's name). With dry it
// changes nothing, and an error refuses the reset; it returns each ctx's
// sentence.
func resetSources(ctx context.Context, jobName string, spec *job.Spec, rs resetStates, dry bool) (map[string]string, error) {
	now, after := rs.now, rs.after
	blocks := map[string]*job.Source{}
	var ctxs []string
	if spec != nil {
		for i := range spec.Sources {
			blocks[spec.Sources[i].Ctx] = &spec.Sources[i]
			ctxs = append(ctxs, spec.Sources[i].Ctx)
		}
	}
	for _, m := range []map[string]bookmark.SourceState{now, after} {
		for c := range m {
			if !slices.Contains(ctxs, c) {
				ctxs = append(ctxs, c)
			}
		}
	}
	out := map[string]string{}
	for _, c := range ctxs {
		n, hasNow := now[c]
		a, hasAfter := after[c]
		state := n
		if !hasNow {
			state = a
		}
		hook := source.ResetHook(blocks[c], state)
		if hook == nil {
			continue
		}
		msg, err := hook(ctx, source.ResetRequest{Job: jobName, Ctx: c, Spec: spec, Source: blocks[c],
			Now: n, HasNow: hasNow, After: a, HasAfter: hasAfter, DryRun: dry})
		if err != nil {
			return out, fmt.Errorf("resetting source %s: %w", c, err)
		}
		if msg != "" {
			out[c] = msg
		}
	}
	return out, nil
}
