package tidemark

import (
	"context"
	"slices"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// resetPreview is Reset with DryRun: what the reset would undo and delete,
// read from the store (no lease, no write) and, with Purge, from the
// sinks' ownership records, so that a purge the real reset would refuse
// (another store or job owns a location) is refused here alike. The
// target is checked as Reset checks it; the store's own check (an
// enable-mode, committed, not undone run) is left to the real reset.
func resetPreview(ctx context.Context, st store.Store, jobName string, opts ResetOptions) (*ResetResult, error) {
	runs, err := store.AllRuns(ctx, st, jobName)
	if err != nil {
		return nil, err
	}
	targetSeq, err := resetTarget(runs, jobName, opts.ToRun)
	if err != nil {
		return nil, err
	}
	if opts.Purge {
		if err := checkPurge(ctx, st, jobName, runs, targetSeq, false); err != nil {
			return nil, err
		}
	}
	head, err := st.Head(ctx, jobName)
	if err != nil {
		return nil, err
	}
	res := &ResetResult{Job: jobName, Version: head.Version, ToRun: opts.ToRun, Undone: []string{}, Purged: []string{}, Deleted: []string{}}
	states, err := readResetStates(ctx, st, jobName, runs, opts.ToRun)
	if err != nil {
		return nil, err
	}
	if res.Sources, err = resetSources(ctx, jobName, opts.Spec, states, true); err != nil {
		return nil, err
	}
	locs := map[string]sink.Location{}
	defer func() {
		for _, l := range locs {
			l.Close()
		}
	}()
	slices.Reverse(runs) // oldest first, as Reset reports them
	for _, r := range runs {
		if r.Seq <= targetSeq || r.Status != store.StatusSucceeded {
			continue
		}
		if !r.Undone {
			res.Undone = append(res.Undone, r.RunID)
		}
		if !opts.Purge || r.Purged {
			continue
		}
		outs, err := st.Outputs(ctx, jobName, r.RunID)
		if err != nil {
			return nil, err
		}
		res.Purged = append(res.Purged, r.RunID)
		for _, o := range outs {
			key := sink.LocationKey(o)
			loc, ok := locs[key]
			if !ok {
				if loc, err = sink.OpenLocation(ctx, o); err != nil {
					return nil, err
				}
				locs[key] = loc
			}
			res.Deleted = append(res.Deleted, outputName(loc, o))
		}
	}
	return res, nil
}

// purgeNamer is a sink location that names what an output published, as
// its Purge reports it deleted ("3 rows of table t", a file's location).
type purgeNamer interface {
	PurgeName(o store.Output) string
}

// outputName names output o at loc as a purge reports it deleted: as the
// location's kind names it, or else by the file it was published as.
func outputName(loc sink.Location, o store.Output) string {
	if n, ok := loc.(purgeNamer); ok {
		return n.PurgeName(o)
	}
	return layout.Join(o.Root, o.Final)
}
