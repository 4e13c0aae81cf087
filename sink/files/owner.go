package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/sink"
	"github.com/tidemark-etl/tidemark/store"
)

// ownerKey is where a file sink location keeps its ownership record.
const ownerKey = metaDir + "/owner.json"

// claimAttempts bounds the rounds of read, create, read again when jobs
// race to claim one location.
const claimAttempts = 3

// checkParents refuses to claim a location that lies inside another job's
// sink location. Records that cannot be read in the folders above (no
// permission there, say) are not this job's concern and are passed over.
func checkParents(ctx context.Context, root, sinkCtx, jobName string) error {
	for _, p := range parentLocations(root) {
		ps, err := objstore.Open(ctx, p, nil)
		if err != nil {
			continue
		}
		o, ok, err := readOwner(ctx, ps)
		if err == nil && ok && o.Job != jobName {
			return &sink.OwnedError{Sink: sinkCtx, Job: jobName, Owner: o, Inside: p}
		}
	}
	return nil
}

// parentLocations lists the locations that contain a sink location,
// nearest first, up to the file system root or the bucket; an S3
// location's option query is kept.
func parentLocations(root string) []string {
	loc, query, _ := strings.Cut(root, "?")
	if query != "" {
		query = "?" + query
	}
	var out []string
	if i := strings.Index(loc, "://"); i >= 0 {
		var parts []string
		for _, p := range strings.Split(loc[i+3:], "/") {
			if p != "" && p != "." {
				parts = append(parts, p)
			}
		}
		for n := len(parts) - 1; n >= 1; n-- {
			out = append(out, loc[:i+3]+strings.Join(parts[:n], "/")+"/"+query)
		}
		return out
	}
	for p := loc; filepath.Dir(p) != p; {
		p = filepath.Dir(p)
		out = append(out, p)
	}
	return out
}

// claimSink checks, claims or (adopt) takes over one location. knows
// reports whether the state has a record of a run; parents refuses a
// location without a record that may not be claimed (unless adopt).
func claimSink(ctx context.Context, s objstore.Store, sinkCtx string, want sink.Owner, mode bookmark.Mode, adopt bool,
	knows func(runID string) (bool, error), parents func() error, log *slog.Logger) error {
	for range claimAttempts {
		cur, ok, err := readOwner(ctx, s)
		if errors.Is(err, errBadOwner) && adopt {
			log.Warn("adopting a sink location whose ownership record is damaged: it is replaced", "sink", sinkCtx, "err", err)
			return putOwner(ctx, s, want)
		}
		if err != nil {
			return err
		}
		unknown := ""
		if ok && cur.Owns(want.Job, store.Identity{ID: want.StateStoreID}) && cur.LastRun != "" {
			known, err := knows(cur.LastRun)
			if err != nil {
				return err
			}
			if !known {
				unknown = cur.LastRun
			}
		}
		switch {
		case ok && adopt:
			if !cur.Owns(want.Job, store.Identity{ID: want.StateStoreID}) || cur.Version > want.Version || unknown != "" {
				log.Warn("adopting a sink location: it now belongs to this job and state; the output already there stays",
					"sink", sinkCtx, "previous_job", cur.Job, "previous_state_store", cur.StateStore, "previous_version", cur.Version)
			}
			return putOwner(ctx, s, want)
		case ok:
			if cur.Owns(want.Job, store.Identity{ID: want.StateStoreID}) && cur.Version <= want.Version && unknown == "" {
				return nil
			}
			if cur.Job == want.Job && mode == bookmark.ModeDisable {
				// A disable run reads all input whatever the state knows:
				// another or an older state of the job changes nothing.
				return nil
			}
			if cur.Job != want.Job || cur.StateStoreID == want.StateStoreID {
				return &sink.OwnedError{Sink: sinkCtx, Job: want.Job, Version: want.Version, Owner: cur, UnknownRun: unknown}
			}
			// The job's, of another state store whose history this state
			// holds (`tidemark state copy` moved it here): this state
			// knows the run that last published and has every version the
			// record has seen, so nothing there is unknown to it. The
			// record moves here; the other store, which does not know
			// this store's runs, is refused once one of them publishes.
			if cur.LastRun != "" && cur.Version <= want.Version {
				known, err := knows(cur.LastRun)
				if err != nil {
					return err
				}
				if known {
					log.Info("claiming the sink location for this state store: it holds the history of the one the record names "+
						"(state copy)", "sink", sinkCtx, "previous_state_store", cur.StateStore, "last_run", cur.LastRun)
					moved := want
					moved.LastRun = cur.LastRun
					return putOwner(ctx, s, moved)
				}
			}
			// Refused if the location holds anything of it; if not,
			// nothing can be read twice.
			empty, err := holdsNothing(ctx, s)
			if err != nil {
				return err
			}
			if !empty || cur.StateStore != want.StateStore {
				return &sink.OwnedError{Sink: sinkCtx, Job: want.Job, Version: want.Version, Owner: cur, Empty: empty}
			}
			// The state store at the same place was made anew (deleted
			// after a failed first run, say): its predecessor is gone
			// and left nothing here, so the new one takes the record.
			log.Warn("claiming the sink location anew: its record names this job's state store as it was before it was made "+
				"anew, and it holds no output", "sink", sinkCtx, "previous_state_store_id", cur.StateStoreID)
			return putOwner(ctx, s, want)
		}
		if !adopt {
			if err := parents(); err != nil {
				return err
			}
		}
		err = createOwner(ctx, s, want)
		if errors.Is(err, objstore.ErrExists) {
			continue // another claimed it meanwhile: read what it wrote
		}
		if err == nil {
			log.Info("claimed the sink location for this job", "sink", sinkCtx, "record", joinLoc(s.Root(), ownerKey))
		}
		return err
	}
	return fmt.Errorf("claiming %s: its ownership record keeps changing", joinLoc(s.Root(), ownerKey))
}

// holdsNothing reports whether a location holds nothing but its ownership
// record: no file outside _tidemark/ (published output), nothing under
// _tidemark/ but the record (staged runs, rejects), and no multipart upload
// under way.
func holdsNothing(ctx context.Context, s objstore.Store) (bool, error) {
	for _, prefix := range []string{"", metaDir + "/"} {
		for o, err := range s.List(ctx, prefix) {
			if err != nil {
				return false, err
			}
			if o.Key != ownerKey {
				return false, nil
			}
		}
	}
	if a, ok := s.(objstore.UploadAborter); ok {
		uploads := 0
		// A match that accepts nothing counts the uploads and aborts none.
		if _, err := a.AbortStaleUploads(ctx, "", -time.Hour, func(string) bool { uploads++; return false }); err != nil {
			return false, err
		}
		if uploads > 0 {
			return false, nil
		}
	}
	return true, nil
}

// recordPublished raises the location's ownership record to the run
// (enable runs) and the version it committed, before the run's first file
// is published there. A location without a record (a run committed by a
// tidemark before records existed) is claimed; one that another job or
// state adopted meanwhile is left alone with a warning. Idempotent.
func recordPublished(ctx context.Context, s objstore.Store, root string, p sink.Publication) error {
	id, err := p.State.Identity(ctx)
	if err != nil {
		return err
	}
	run, jobName, runID, log := p.Run, p.Job, p.RunID, p.Log
	cur, ok, err := readOwner(ctx, s)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	enable := run.Mode == bookmark.ModeEnable
	switch {
	case !ok:
		o := sink.Owner{Job: jobName, StateStoreID: id.ID, StateStore: store.Redact(id.Location),
			Version: run.Version, CreatedAt: now, UpdatedAt: now}
		if enable {
			o.LastRun = runID
		}
		err = createOwner(ctx, s, o)
		if errors.Is(err, objstore.ErrExists) {
			err = nil // claimed meanwhile; the next run checks it
		}
	case !cur.Owns(jobName, id) && cur.Job == jobName && run.Mode == bookmark.ModeDisable:
		// A disable run of the job under another state: the record
		// stays the owner's (see claimSink).
	case !cur.Owns(jobName, id):
		log.Warn("the sink location was handed over to another job or state store; its record is left as it is",
			"root", layout.Name(root), "run", runID, "owner", cur.Job, "owner_state_store", cur.StateStore)
	case cur.Version < run.Version || enable && cur.Version == run.Version && cur.LastRun == "":
		cur.Version, cur.UpdatedAt, cur.StateStore = run.Version, now, store.Redact(id.Location)
		if enable {
			cur.LastRun = runID
		}
		err = putOwner(ctx, s, cur)
	}
	if err != nil {
		return fmt.Errorf("recording run %s in %s: %w", runID, joinLoc(root, ownerKey), err)
	}
	return nil
}

// errBadOwner marks an ownership record that cannot be read as one.
var errBadOwner = errors.New("not a tidemark ownership record")

// readOwner reads a location's ownership record; ok is false if it has
// none.
func readOwner(ctx context.Context, s objstore.Store) (sink.Owner, bool, error) {
	rc, err := s.Open(ctx, ownerKey)
	if errors.Is(err, objstore.ErrNotExist) {
		return sink.Owner{}, false, nil
	}
	if err != nil {
		return sink.Owner{}, false, fmt.Errorf("reading %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return sink.Owner{}, false, fmt.Errorf("reading %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	var o sink.Owner
	why := ""
	switch err := json.Unmarshal(data, &o); {
	case len(bytes.TrimSpace(data)) == 0:
		why = "it is empty"
	case err != nil:
		why = err.Error()
	case o.Job == "" || o.StateStoreID == "":
		why = "it names no job or no state store id"
	}
	if why != "" {
		return sink.Owner{}, false, fmt.Errorf("%s is %w (%s): restore it, or delete it to let the next run claim the location "+
			"(or take it over with `tidemark run JOBFILE --adopt-sink`)", joinLoc(s.Root(), ownerKey), errBadOwner, why)
	}
	return o, true, nil
}

// createOwner writes a record where none is, atomically where the store
// can (objstore.Creator); ErrExists if one is there.
func createOwner(ctx context.Context, s objstore.Store, o sink.Owner) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if c, ok := s.(objstore.Creator); ok {
		return c.Create(ctx, ownerKey, bytes.NewReader(append(data, '\n')))
	}
	// A store without conditional writes: check, then write (racy).
	if _, err := s.Stat(ctx, ownerKey); err == nil {
		return objstore.ErrExists
	}
	return putOwner(ctx, s, o)
}

// putOwner writes (replaces) a location's record.
func putOwner(ctx context.Context, s objstore.Store, o sink.Owner) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := s.Put(ctx, ownerKey, bytes.NewReader(append(data, '\n'))); err != nil {
		return fmt.Errorf("writing %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	return nil
}

var _ sink.PurgeChecker = (*location)(nil)

// CheckPurge refuses a reset's purge here when the ownership record names
// another job, or another state store whose history c's does not hold:
// as a run's claim, a store that `tidemark state copy` filled may act for
// the record's until that store's runs publish here. A location without a
// record (written before records existed) or with a damaged one is passed
// over: the purge deletes only the run's own files.
func (l *location) CheckPurge(ctx context.Context, c sink.Claim) error {
	cur, ok, err := readOwner(ctx, l.objs)
	if errors.Is(err, errBadOwner) || err == nil && !ok {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", joinLoc(l.root, ownerKey), err)
	}
	if cur.Owns(c.Job, c.Identity) {
		return nil
	}
	if cur.Job == c.Job && cur.LastRun != "" && cur.Version <= c.Version {
		known, err := c.Known(ctx, cur.LastRun)
		if err != nil || known {
			return err
		}
	}
	return &sink.OwnedError{Location: layout.Name(l.root), Job: c.Job, State: c.Identity, Version: c.Version,
		Owner: cur, Purge: true}
}
