package tidemark

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/manifest"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// ResetOptions are the settings of Reset.
type ResetOptions struct {
	// ToRun restores the bookmark exactly as that run committed it (Glue's
	// rewind); empty clears the bookmark.
	ToRun string
	// Purge deletes what every later run published, whatever its mode.
	Purge  bool
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
}

// Reset clears or rewinds a job's bookmark under its lease, after rolling
// forward any committed run not yet published, and with Purge deletes the
// output of every run after the target.
func Reset(ctx context.Context, st store.Store, jobName string, opts ResetOptions) (*ResetResult, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	lease, err := acquire(ctx, st, jobName, "reset-"+newRunID(time.Now()), DefaultLeaseTTL, cancel, log)
	if err != nil {
		return nil, err
	}
	defer lease.release()
	rs := roots{}
	if err := markDead(ctx, st, jobName, log); err != nil {
		return nil, err
	}
	runs, err := st.Runs(ctx, jobName)
	if err != nil {
		return nil, err
	}
	var targetSeq int64
	if opts.ToRun != "" {
		found := false
		for _, r := range runs {
			if r.RunID == opts.ToRun {
				found, targetSeq = true, r.Seq
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: job %s has no run %s (see `tidemark runs %s`)", ErrUsage, jobName, opts.ToRun, jobName)
		}
	}
	isUndone := func(r store.Run) bool { return r.Seq > targetSeq }
	if err := recoverJob(ctx, st, rs, jobName, nil, log, isUndone); err != nil {
		return nil, fmt.Errorf("recovering earlier runs: %w", err)
	}
	if runs, err = st.Runs(ctx, jobName); err != nil {
		return nil, err
	}
	undone, err := st.Reset(ctx, jobName, lease.token(), opts.ToRun)
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
	if !opts.Purge {
		return res, nil
	}
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
		for _, o := range outs {
			if o.Kind == manifest.TableLoad {
				n, err := purgeTable(ctx, o, jobName)
				if err != nil {
					return res, err
				}
				res.Deleted = append(res.Deleted, fmt.Sprintf("%d rows of table %s", n, o.Final))
				log.Info("deleted", "run", r.RunID, "table", o.Final, "rows", n)
				continue
			}
			s, err := rs.open(ctx, o.Root)
			if err != nil {
				return res, err
			}
			_, statErr := s.Stat(ctx, o.Final)
			if statErr != nil && !errors.Is(statErr, objstore.ErrNotExist) {
				return res, fmt.Errorf("purging output of run %s: %w", r.RunID, statErr)
			}
			keys := []string{o.Final}
			if o.Kind == manifest.File {
				keys = append(keys, o.Staged) // an upload's bytes are at Final
			}
			for _, k := range keys {
				if err := s.Delete(ctx, k); err != nil {
					return res, fmt.Errorf("purging output of run %s: %w", r.RunID, err)
				}
			}
			if statErr != nil {
				res.Gone = append(res.Gone, joinLoc(o.Root, o.Final))
				continue
			}
			res.Deleted = append(res.Deleted, joinLoc(o.Root, o.Final))
			log.Info("deleted", "run", r.RunID, "file", joinLoc(o.Root, o.Final))
		}
		if err := st.MarkPurged(ctx, jobName, r.RunID); err != nil {
			return res, err
		}
		res.Purged = append(res.Purged, r.RunID)
	}
	if len(res.Gone) > 0 {
		log.Warn("files of the purged runs were not where they were published: replaced by a later overwrite, deleted by "+
			"hand, or moved with the sink folder (if you moved it, they are still there: delete them at the new place)",
			"files", len(res.Gone), "examples", strings.Join(res.Gone[:min(len(res.Gone), maxForeignNamed)], ", "))
	}
	return res, nil
}

// joinLoc names a key under a location for messages, leaving out the
// location's option query string.
func joinLoc(root, key string) string {
	root, _, _ = strings.Cut(root, "?")
	if strings.HasSuffix(root, "/") {
		return root + key
	}
	return root + "/" + key
}
