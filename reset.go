package tidemark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/internal/fault"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// ResetOptions are the settings of Reset.
type ResetOptions struct {
	// ToRun restores the bookmark exactly as that run committed it (Glue's
	// rewind); empty clears the bookmark.
	ToRun string
	// Purge deletes what every later run published, whatever its mode.
	Purge bool
	// DryRun changes nothing and takes no lease: the result says what the
	// reset would undo (Undone), whose output it would delete (Purged) and
	// which files or rows (Deleted), at the current Version. A run
	// committed but not yet published, which the reset would roll forward
	// first, is counted as published.
	DryRun bool
	// By names who asked (e.g. "cli alice@host"), recorded with the new
	// bookmark version (store.Version.By).
	By string
	// Spec is the job file, when the reset was given one: a source kind
	// then reaches what a source holds outside the state store (a
	// replication slot) to drop or keep it (nil: a job name).
	Spec *job.Spec
	// HostID names this host in the job's lease while the reset holds it
	// (DefaultHostID if empty).
	HostID string
	Logger *slog.Logger
}

// ResetResult says what a reset undid and deleted.
type ResetResult struct {
	Job     string   `json:"job"`
	Version int64    `json:"version"`
	ToRun   string   `json:"to_run,omitempty"`
	Undone  []string `json:"undone"`
	Purged  []string `json:"purged"`  // runs whose output was deleted
	Deleted []string `json:"deleted"` // locations of deleted files
	// Gone are the files of purged runs that were not where they were
	// published: replaced by a later overwrite, deleted by hand, or moved
	// with the sink folder (then they are still there, at the new place).
	Gone []string `json:"gone,omitempty"`
	// CatalogDropped are the catalog partitions the purge emptied and the
	// reset dropped, as DB.TABLE/key=value/...
	CatalogDropped []string `json:"catalog_dropped,omitempty"`
	// Sources says, per source ctx, what the reset did (or, with DryRun,
	// would do) to what the source holds outside the state store: a
	// changes: log source's replication slot dropped, kept or left.
	Sources map[string]string `json:"sources,omitempty"`
}

// Reset clears or rewinds a job's bookmark under its lease, after rolling
// forward any committed run not yet published, and with Purge deletes the
// output of every run after the target.
func Reset(ctx context.Context, st store.Store, jobName string, opts ResetOptions) (*ResetResult, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.DryRun {
		return resetPreview(ctx, st, jobName, opts)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lease, err := acquire(ctx, st, jobName, holderFor("reset-"+newRunID(time.Now()), opts.HostID, time.Now()), DefaultLeaseTTL, cancel, log)
	if err != nil {
		return nil, err
	}
	defer lease.release()
	if err := markDead(ctx, st, jobName, lease.token(), log); err != nil {
		return nil, err
	}
	runs, err := store.AllRuns(ctx, st, jobName)
	if err != nil {
		return nil, err
	}
	targetSeq, err := resetTarget(runs, jobName, opts.ToRun)
	if err != nil {
		return nil, err
	}
	states, err := readResetStates(ctx, st, jobName, runs, opts.ToRun)
	if err != nil {
		return nil, err
	}
	// What the sources hold outside the store is checked before anything
	// changes (a slot that cannot serve the rewind refuses the reset).
	if _, err := resetSources(ctx, jobName, opts.Spec, states, true); err != nil {
		return nil, err
	}
	if opts.Purge {
		if err := checkPurge(ctx, st, jobName, runs, targetSeq, false); err != nil {
			return nil, err
		}
		fault.At(fault.PurgeChecked)
		// Checked again and taken over in one conditional write per
		// location: a claim of another store between the check above and
		// the deletes refuses the purge here, before anything changes.
		if err := checkPurge(ctx, st, jobName, runs, targetSeq, true); err != nil {
			return nil, err
		}
	}
	isUndone := func(r store.Run) bool { return r.Seq > targetSeq }
	if err := recoverJob(ctx, st, jobName, lease.token(), nil, log, isUndone); err != nil {
		return nil, fmt.Errorf("recovering earlier runs: %w", err)
	}
	if runs, err = store.AllRuns(ctx, st, jobName); err != nil {
		return nil, err
	}
	undone, err := st.Reset(ctx, jobName, lease.token(), opts.ToRun, opts.By)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return nil, fmt.Errorf("resetting job %s: %w", jobName, err)
	}
	head, err := st.Head(ctx, jobName)
	if err != nil {
		return nil, err
	}
	res := &ResetResult{Job: jobName, Version: head.Version, ToRun: opts.ToRun, Undone: []string{}, Purged: []string{}, Deleted: []string{}}
	for _, r := range undone {
		res.Undone = append(res.Undone, r.RunID)
	}
	if res.Sources, err = resetSources(ctx, jobName, opts.Spec, states, false); err != nil {
		return res, fmt.Errorf("bookmark reset (version %d), but: %w", res.Version, err)
	}
	if !opts.Purge {
		return res, nil
	}
	emptied := map[string]bool{} // folders the purge left without files
	// Runs undone by an earlier reset without purge are purged too.
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		if r.Seq <= targetSeq || r.Status != store.StatusSucceeded || r.Purged {
			continue
		}
		outs, err := st.Outputs(ctx, jobName, r.RunID)
		if err != nil {
			return res, err
		}
		if err := purgeRun(ctx, jobName, r.RunID, outs, res, emptied, log); err != nil {
			return res, err
		}
		if err := st.MarkPurged(ctx, jobName, lease.token(), r.RunID); err != nil {
			return res, err
		}
		res.Purged = append(res.Purged, r.RunID)
	}
	if err := dropEmptied(ctx, st, emptied, res, log); err != nil {
		return res, err
	}
	if len(res.Gone) > 0 {
		log.Warn("files of the purged runs were not where they were published: replaced by a later overwrite, deleted by "+
			"hand, or moved with the sink folder (if you moved it, they are still there: delete them at the new place)",
			"files", len(res.Gone), "examples", strings.Join(res.Gone[:min(len(res.Gone), maxNamed)], ", "))
	}
	return res, nil
}

// resetTarget is the Seq of the run a reset rewinds to (0: a full reset);
// a usage error if the job has no such run.
func resetTarget(runs []store.Run, jobName, toRun string) (int64, error) {
	if toRun == "" {
		return 0, nil
	}
	for _, r := range runs {
		if r.RunID == toRun {
			return r.Seq, nil
		}
	}
	return 0, fmt.Errorf("%w: job %s has no run %s (see `tidemark runs %s`)", ErrUsage, jobName, toRun, jobName)
}

// checkPurge refuses a purge, before anything changes, when a location
// the purged runs published to is no longer the job's under this state
// store (sink.PurgeChecker): after `state copy` another store's runs have
// published there, or another job took it over, and that bookmark counts
// the output as published. With take, each location is also taken over
// for the version the reset commits (TakeForPurge), so that a claim of
// another store racing the reset fails from then on.
func checkPurge(ctx context.Context, st store.Store, jobName string, runs []store.Run, targetSeq int64, take bool) error {
	id, err := st.Identity(ctx)
	if err != nil {
		return err
	}
	head, err := st.Head(ctx, jobName)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	c := sink.Claim{Job: jobName, Identity: id, Version: head.Version, Known: knownRun(st, jobName)}
	if take {
		c.Version++ // Reset commits a new head version, the next one
	}
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Seq <= targetSeq || r.Status != store.StatusSucceeded || r.Purged {
			continue
		}
		outs, err := st.Outputs(ctx, jobName, r.RunID)
		if err != nil {
			return err
		}
		for _, o := range outs {
			key := sink.LocationKey(o)
			if seen[key] {
				continue
			}
			seen[key] = true
			loc, err := sink.OpenLocation(ctx, o)
			if err != nil {
				return err
			}
			if pc, ok := loc.(sink.PurgeChecker); ok && take {
				err = pc.TakeForPurge(ctx, c)
			} else if ok {
				err = pc.CheckPurge(ctx, c)
			}
			loc.Close()
			var owned *sink.OwnedError
			if errors.As(err, &owned) {
				owned.Sink = o.Sink
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// maxNamed is how many files a warning names.
const maxNamed = 5

// purgeRun has every location the run's outputs are at delete them,
// location by location, adding what was deleted (and what was already
// gone) to res.
func purgeRun(ctx context.Context, jobName, runID string, outs []store.Output, res *ResetResult, emptied map[string]bool, log *slog.Logger) error {
	var keys []string
	at := map[string][]store.Output{}
	for _, o := range outs {
		key := sink.LocationKey(o)
		if _, ok := at[key]; !ok {
			keys = append(keys, key)
		}
		at[key] = append(at[key], o)
	}
	for _, k := range keys {
		loc, err := sink.OpenLocation(ctx, at[k][0])
		if err != nil {
			return err
		}
		p, err := loc.Purge(ctx, jobName, runID, at[k], log)
		loc.Close()
		res.Deleted = append(res.Deleted, p.Deleted...)
		res.Gone = append(res.Gone, p.Gone...)
		for _, e := range p.Emptied {
			emptied[e] = true
		}
		if err != nil {
			return err
		}
	}
	return nil
}
