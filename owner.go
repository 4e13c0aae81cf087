package tidemark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/objstore"
	sinksql "github.com/tidemark-etl/tidemark/sink/sqltable"
	"github.com/tidemark-etl/tidemark/store"
)

// ownerKey is where a file sink location keeps its ownership record.
const ownerKey = metaDir + "/owner.json"

// claimAttempts bounds the rounds of read, create, read again when jobs
// race to claim one location.
const claimAttempts = 3

// sinkOwner is a file sink location's ownership record: the job that
// writes there, the state store that holds its bookmark, and the last
// bookmark version whose run published there. It is what makes a folder
// recognisably a tidemark sink, and what tells a lost or replaced state
// from the owner's.
type sinkOwner struct {
	Job          string `json:"job"`
	StateStoreID string `json:"state_store_id"`
	// StateStore is where the state store was, for people; the ID decides.
	StateStore string    `json:"state_store"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// owns reports whether the record names this job of this state store.
func (o sinkOwner) owns(jobName string, id store.Identity) bool {
	return o.Job == jobName && o.StateStoreID == id.ID
}

// SinkOwnedError refuses a run at a sink location whose ownership record
// does not name the job of this state store, or names a later bookmark
// version than the state holds (exit 2). Nothing was written or deleted.
type SinkOwnedError struct {
	Sink     string // the sink's ctx
	Location string
	Job      string
	State    store.Identity
	Version  int64 // the state's bookmark version
	Owner    sinkOwner
	// LastRun is set for a SQL table sink: the newest run of the job whose
	// marker the table's _tidemark_runs holds and this state does not know.
	LastRun string
	// Empty is set when the location holds no file outside _tidemark/ (a
	// first run failed before it published, or the output was deleted):
	// there is nothing a run could duplicate, and the message says so.
	Empty bool
}

func (e *SinkOwnedError) Error() string {
	o := e.Owner
	switch {
	case e.LastRun != "":
		return fmt.Sprintf("sink %s: table %s holds rows of run %s of job %q (its marker in _tidemark_runs), which the state "+
			"store %s (id %s) has no record of: the state was lost, emptied, replaced or restored from an older copy, and "+
			"running on would load input again that is already in the table. To go on: restore the state store; or start a "+
			"new history on purpose with `tidemark run JOBFILE --adopt-sink` (the rows already there stay); or write to a new table",
			e.Sink, e.Location, e.LastRun, e.Job, e.State.Location, e.State.ID)
	case o.Job != e.Job:
		return fmt.Sprintf("sink %s: %s belongs to job %q of the state store %s (id %s); job %q may not write there: "+
			"give this job another sink path, or hand the location over to it with `tidemark run JOBFILE --adopt-sink`",
			e.Sink, e.Location, o.Job, o.StateStore, o.StateStoreID, e.Job)
	case e.Empty:
		return fmt.Sprintf("sink %s: %s is recorded for job %q of the state store %s (id %s) at bookmark version %d, and this "+
			"state store, %s (id %s), is at version %d; but the location holds no output (no run published there, or its "+
			"output was deleted), so nothing would be read into it twice. To go on: make it this state's with "+
			"`tidemark run JOBFILE --adopt-sink`; or restore that state store; or write to a new sink path",
			e.Sink, e.Location, o.Job, o.StateStore, o.StateStoreID, o.Version, e.State.Location, e.State.ID, e.Version)
	case o.StateStoreID != e.State.ID:
		which := fmt.Sprintf("recorded in the state store %s (id %s), not in this one, %s (id %s)",
			o.StateStore, o.StateStoreID, e.State.Location, e.State.ID)
		if o.StateStore == e.State.Location {
			which = fmt.Sprintf("recorded in the state store %s when it had id %s; it has id %s now: it was made anew",
				o.StateStore, o.StateStoreID, e.State.ID)
		}
		return fmt.Sprintf("sink %s: %s holds output of job %q %s. This state has no record of that output (the state was lost, "+
			"emptied or replaced, or another state store runs a job of this name), and running on would read all input again "+
			"into a sink that already holds it. To go on: restore that state store; or start a new history on purpose with "+
			"`tidemark run JOBFILE --adopt-sink` (the output already there stays: delete it first, or expect it twice); "+
			"or write to a new sink path", e.Sink, e.Location, o.Job, which)
	default:
		return fmt.Sprintf("sink %s: %s holds output of job %q up to bookmark version %d, but the state store %s is at version %d: "+
			"the state was restored from an older copy (or lost its later commits), and running on would read input again "+
			"that is already in the sink. To go on: restore the newest state; or start a new history on purpose with "+
			"`tidemark run JOBFILE --adopt-sink`; or write to a new sink path",
			e.Sink, e.Location, o.Job, o.Version, e.State.Location, e.Version)
	}
}

// claimSinks makes sure every file sink location of the job is the job's
// own under this state store before anything of the run touches a sink: a
// location without a record is claimed (created only if still absent, so
// of two jobs racing one wins); one recorded for another job or state
// store, or for a later version than the state's, is refused with a
// *SinkOwnedError. With adopt the records are rewritten for this job and
// state instead.
func claimSinks(ctx context.Context, st store.Store, rs roots, spec *job.Spec, jobName string, adopt bool, log *slog.Logger) error {
	id, err := st.Identity(ctx)
	if err != nil {
		return err
	}
	head, err := st.Head(ctx, jobName)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	seen := map[string]bool{}
	for _, k := range spec.Sinks {
		if k.IsTable() {
			if !adopt {
				if err := checkTableSink(ctx, st, k, jobName, id); err != nil {
					return err
				}
			}
			continue
		}
		root := sinkLocation(spec, k)
		if seen[root] {
			continue
		}
		seen[root] = true
		s, err := rs.open(ctx, root)
		if err != nil {
			return fmt.Errorf("sink %s: %w", k.Ctx, err)
		}
		now := time.Now().UTC()
		want := sinkOwner{Job: jobName, StateStoreID: id.ID, StateStore: store.Redact(id.Location),
			Version: head.Version, CreatedAt: now, UpdatedAt: now}
		if err := claimSink(ctx, s, k.Ctx, want, adopt, log); err != nil {
			var owned *SinkOwnedError
			if errors.As(err, &owned) {
				owned.Location, owned.State = locationName(root), id
				return err
			}
			return fmt.Errorf("sink %s: %w", k.Ctx, err)
		}
	}
	return nil
}

// checkTableSink refuses a run whose state has no record of the newest run
// of the job that loaded into a SQL table sink (its marker row names the
// job and run): the state was lost or is older than the table.
func checkTableSink(ctx context.Context, st store.Store, k job.Sink, jobName string, id store.Identity) error {
	ts, err := sinksql.Open(ctx, sinksql.SinkConfig{Ctx: k.Ctx, Connection: k.Connection, PasswordEnv: k.PasswordEnv,
		Table: k.Table, Mode: k.Mode, MergeKeys: k.MergeKeys})
	if err != nil {
		return err
	}
	defer ts.Close()
	last, err := ts.LastRun(ctx, jobName)
	if err != nil || last == "" {
		return err
	}
	if _, err := st.Run(ctx, jobName, last); errors.Is(err, store.ErrNotFound) {
		return &SinkOwnedError{Sink: k.Ctx, Location: k.Table, Job: jobName, State: id, LastRun: last}
	} else if err != nil {
		return fmt.Errorf("reading run %s: %w", last, err)
	}
	return nil
}

// claimSink checks, claims or (adopt) takes over one location.
func claimSink(ctx context.Context, s objstore.Store, sinkCtx string, want sinkOwner, adopt bool, log *slog.Logger) error {
	for range claimAttempts {
		cur, ok, err := readOwner(ctx, s)
		if err != nil {
			return err
		}
		switch {
		case ok && adopt:
			if !cur.owns(want.Job, store.Identity{ID: want.StateStoreID}) || cur.Version > want.Version {
				log.Warn("adopting a sink location: it now belongs to this job and state; the output already there stays",
					"sink", sinkCtx, "previous_job", cur.Job, "previous_state_store", cur.StateStore, "previous_version", cur.Version)
			}
			return putOwner(ctx, s, want)
		case ok:
			if cur.owns(want.Job, store.Identity{ID: want.StateStoreID}) && cur.Version <= want.Version {
				return nil
			}
			empty := false
			if cur.Job == want.Job {
				if empty, err = holdsNothing(ctx, s); err != nil {
					return err
				}
			}
			return &SinkOwnedError{Sink: sinkCtx, Job: want.Job, Version: want.Version, Owner: cur, Empty: empty}
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

// holdsNothing reports whether a sink location lists no file (List leaves
// out _tidemark/ and other _- and .-prefixed entries).
func holdsNothing(ctx context.Context, s objstore.Store) (bool, error) {
	for _, err := range s.List(ctx, "") {
		if err != nil {
			return false, fmt.Errorf("listing %s: %w", s.Root(), err)
		}
		return false, nil
	}
	return true, nil
}

// recordPublished raises the ownership records of the locations a run
// published to (file sinks) to the version it committed. A location
// without a record (a run committed by a tidemark before records existed)
// is claimed; one that another job or state adopted meanwhile is left
// alone with a warning. Idempotent.
func recordPublished(ctx context.Context, st store.Store, rs roots, jobName, runID string, locations []string, log *slog.Logger) error {
	if len(locations) == 0 {
		return nil
	}
	id, err := st.Identity(ctx)
	if err != nil {
		return err
	}
	run, err := st.Run(ctx, jobName, runID)
	if err != nil {
		return fmt.Errorf("reading run %s: %w", runID, err)
	}
	for _, root := range locations {
		s, err := rs.open(ctx, root)
		if err != nil {
			return err
		}
		cur, ok, err := readOwner(ctx, s)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		switch {
		case !ok:
			err = createOwner(ctx, s, sinkOwner{Job: jobName, StateStoreID: id.ID, StateStore: store.Redact(id.Location),
				Version: run.Version, CreatedAt: now, UpdatedAt: now})
			if errors.Is(err, objstore.ErrExists) {
				err = nil // claimed meanwhile; the next run checks it
			}
		case !cur.owns(jobName, id):
			log.Warn("the sink location was handed over to another job or state store; its record is left as it is",
				"root", locationName(root), "run", runID, "owner", cur.Job, "owner_state_store", cur.StateStore)
		case cur.Version < run.Version:
			cur.Version, cur.UpdatedAt, cur.StateStore = run.Version, now, store.Redact(id.Location)
			err = putOwner(ctx, s, cur)
		}
		if err != nil {
			return fmt.Errorf("recording run %s in %s: %w", runID, joinLoc(root, ownerKey), err)
		}
	}
	return nil
}

// readOwner reads a location's ownership record; ok is false if it has
// none.
func readOwner(ctx context.Context, s objstore.Store) (sinkOwner, bool, error) {
	rc, err := s.Open(ctx, ownerKey)
	if errors.Is(err, objstore.ErrNotExist) {
		return sinkOwner{}, false, nil
	}
	if err != nil {
		return sinkOwner{}, false, fmt.Errorf("reading %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return sinkOwner{}, false, fmt.Errorf("reading %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	var o sinkOwner
	if err := json.Unmarshal(data, &o); err != nil || o.Job == "" || o.StateStoreID == "" {
		return sinkOwner{}, false, fmt.Errorf("%s is not a tidemark ownership record (%v): restore it, or delete it to let "+
			"the next run claim the location", joinLoc(s.Root(), ownerKey), err)
	}
	return o, true, nil
}

// createOwner writes a record where none is, atomically where the store
// can (objstore.Creator); ErrExists if one is there.
func createOwner(ctx context.Context, s objstore.Store, o sinkOwner) error {
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
func putOwner(ctx context.Context, s objstore.Store, o sinkOwner) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := s.Put(ctx, ownerKey, bytes.NewReader(append(data, '\n'))); err != nil {
		return fmt.Errorf("writing %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	return nil
}

// locationName is a sink location for messages, without its option query.
func locationName(root string) string {
	root, _, _ = strings.Cut(root, "?")
	return root
}
