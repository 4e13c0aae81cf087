package tidemark

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
// writes there, the state store that holds its bookmark, and the last run
// (and its bookmark version) that published there. It is what makes a
// folder recognisably a tidemark sink, and what tells a lost, replaced or
// older state from the owner's.
type sinkOwner struct {
	Job          string `json:"job"`
	StateStoreID string `json:"state_store_id"`
	// StateStore is where the state store was, for people; the ID decides.
	StateStore string `json:"state_store"`
	Version    int64  `json:"version"`
	// LastRun is the enable run that last published there ("" until one
	// did): a state that has no record of it is older than the location,
	// whatever its version (a reset raises the version too).
	LastRun   string    `json:"last_run,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
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
	// UnknownRun is the record's last run, which this state has no record
	// of.
	UnknownRun string
	// Empty: the location holds nothing but the record (no published or
	// staged file, no upload under way).
	Empty bool
	// Inside is set when the location has no record and lies inside
	// Inside, another job's sink location (Owner is its record).
	Inside string
}

func (e *SinkOwnedError) Error() string {
	o := e.Owner
	switch {
	case e.Inside != "":
		return fmt.Sprintf("sink %s: %s lies inside %s, the sink location of job %q of the state store %s (id %s): its readers "+
			"would take job %q's files for that job's, and that job's runs may replace or delete them. Give this job a sink "+
			"path outside it (or write there anyway with `tidemark run JOBFILE --adopt-sink`)",
			e.Sink, e.Location, locationName(e.Inside), o.Job, o.StateStore, o.StateStoreID, e.Job)
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
	case o.StateStoreID != e.State.ID && e.Empty:
		return fmt.Sprintf("sink %s: %s is claimed by job %q of the state store %s (id %s), not this one, %s (id %s); it holds "+
			"no output yet. If no run of that state store is under way (it was lost, or is not used any more), take the location "+
			"over with `tidemark run JOBFILE --adopt-sink`; or write to a new sink path",
			e.Sink, e.Location, o.Job, o.StateStore, o.StateStoreID, e.State.Location, e.State.ID)
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
	case e.UnknownRun != "":
		return fmt.Sprintf("sink %s: %s holds output of job %q up to run %s (bookmark version %d), which the state store %s "+
			"(now at version %d) has no record of: the state was restored from an older copy (or lost its later commits), "+
			"and running on would read input again that is already in the sink. To go on: restore the newest state; or start "+
			"a new history on purpose with `tidemark run JOBFILE --adopt-sink` (the input of the later runs is read again: "+
			"delete their output first, or expect it twice); or write to a new sink path",
			e.Sink, e.Location, o.Job, e.UnknownRun, o.Version, e.State.Location, e.Version)
	default:
		return fmt.Sprintf("sink %s: %s holds output of job %q up to bookmark version %d, but the state store %s is at version %d: "+
			"the state was restored from an older copy (or lost its later commits), and running on would read input again "+
			"that is already in the sink. To go on: restore the newest state; or start a new history on purpose with "+
			"`tidemark run JOBFILE --adopt-sink` (the input of the later runs is read again: delete their output first, or "+
			"expect it twice); or write to a new sink path",
			e.Sink, e.Location, o.Job, o.Version, e.State.Location, e.Version)
	}
}

// claimSinks makes sure every file sink location of the job is the job's
// own under this state store before anything of the run touches a sink: a
// location without a record is claimed (created only if still absent, so
// of two jobs racing one wins); one recorded for another job or state
// store, or for a later version than the state's, is refused with a
// *SinkOwnedError. With adopt the records are rewritten for this job and
// state instead. A disable run (which reads all input whatever the state
// knows) is refused only by another job's record.
func claimSinks(ctx context.Context, st store.Store, rs roots, spec *job.Spec, jobName string, mode bookmark.Mode, adopt bool,
	log *slog.Logger) error {
	id, err := st.Identity(ctx)
	if err != nil {
		return err
	}
	head, err := st.Head(ctx, jobName)
	if err != nil {
		return fmt.Errorf("reading bookmark: %w", err)
	}
	knows := func(runID string) (bool, error) {
		_, err := st.Run(ctx, jobName, runID)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("reading run %s: %w", runID, err)
		}
		return true, nil
	}
	seen := map[string]bool{}
	for _, k := range spec.Sinks {
		if k.IsTable() {
			if !adopt && mode != bookmark.ModeDisable {
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
		parents := func() error { return checkParents(ctx, rs, root, k.Ctx, jobName) }
		if err := claimSink(ctx, s, k.Ctx, want, mode, adopt, knows, parents, log); err != nil {
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

// checkParents refuses to claim a location that lies inside another job's
// sink location. Records that cannot be read in the folders above (no
// permission there, say) are not this job's concern and are passed over.
func checkParents(ctx context.Context, rs roots, root, sinkCtx, jobName string) error {
	for _, p := range parentLocations(root) {
		ps, err := rs.open(ctx, p)
		if err != nil {
			continue
		}
		o, ok, err := readOwner(ctx, ps)
		if err == nil && ok && o.Job != jobName {
			return &SinkOwnedError{Sink: sinkCtx, Job: jobName, Owner: o, Inside: p}
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

// checkTableSink refuses a run whose state has no record of the newest run
// of the job that loaded into a SQL table sink (its marker row names the
// job and run): the state was lost or is older than the table.
func checkTableSink(ctx context.Context, st store.Store, k job.Sink, jobName string, id store.Identity) error {
	ts, err := sinksql.Open(ctx, tableSinkConfig(k))
	if err != nil {
		return err
	}
	defer ts.Close()
	last, err := ts.LastRun(ctx, jobName)
	if err != nil || last == "" {
		return err
	}
	if _, err := st.Run(ctx, jobName, last); errors.Is(err, store.ErrNotFound) {
		return &SinkOwnedError{Sink: k.Ctx, Location: tableSinkConfig(k).Table, Job: jobName, State: id, LastRun: last}
	} else if err != nil {
		return fmt.Errorf("reading run %s: %w", last, err)
	}
	return nil
}

// claimSink checks, claims or (adopt) takes over one location. knows
// reports whether the state has a record of a run; parents refuses a
// location without a record that may not be claimed (unless adopt).
func claimSink(ctx context.Context, s objstore.Store, sinkCtx string, want sinkOwner, mode bookmark.Mode, adopt bool,
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
		if ok && cur.owns(want.Job, store.Identity{ID: want.StateStoreID}) && cur.LastRun != "" {
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
			if !cur.owns(want.Job, store.Identity{ID: want.StateStoreID}) || cur.Version > want.Version || unknown != "" {
				log.Warn("adopting a sink location: it now belongs to this job and state; the output already there stays",
					"sink", sinkCtx, "previous_job", cur.Job, "previous_state_store", cur.StateStore, "previous_version", cur.Version)
			}
			return putOwner(ctx, s, want)
		case ok:
			if cur.owns(want.Job, store.Identity{ID: want.StateStoreID}) && cur.Version <= want.Version && unknown == "" {
				return nil
			}
			if cur.Job == want.Job && mode == bookmark.ModeDisable {
				// A disable run reads all input whatever the state knows:
				// another or an older state of the job changes nothing.
				return nil
			}
			if cur.Job != want.Job || cur.StateStoreID == want.StateStoreID {
				return &SinkOwnedError{Sink: sinkCtx, Job: want.Job, Version: want.Version, Owner: cur, UnknownRun: unknown}
			}
			// The job's, of another state store: refused if the location
			// holds anything of it; if not, nothing can be read twice.
			empty, err := holdsNothing(ctx, s)
			if err != nil {
				return err
			}
			if !empty || cur.StateStore != want.StateStore {
				return &SinkOwnedError{Sink: sinkCtx, Job: want.Job, Version: want.Version, Owner: cur, Empty: empty}
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

// recordPublished raises the ownership records of the locations a run
// publishes to (file sinks) to the run (enable runs) and the version it
// committed, before the run's first file is published there. A location
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
		enable := run.Mode == bookmark.ModeEnable
		switch {
		case !ok:
			o := sinkOwner{Job: jobName, StateStoreID: id.ID, StateStore: store.Redact(id.Location),
				Version: run.Version, CreatedAt: now, UpdatedAt: now}
			if enable {
				o.LastRun = runID
			}
			err = createOwner(ctx, s, o)
			if errors.Is(err, objstore.ErrExists) {
				err = nil // claimed meanwhile; the next run checks it
			}
		case !cur.owns(jobName, id) && cur.Job == jobName && run.Mode == bookmark.ModeDisable:
			// A disable run of the job under another state: the record
			// stays the owner's (see claimSink).
		case !cur.owns(jobName, id):
			log.Warn("the sink location was handed over to another job or state store; its record is left as it is",
				"root", locationName(root), "run", runID, "owner", cur.Job, "owner_state_store", cur.StateStore)
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
	}
	return nil
}

// errBadOwner marks an ownership record that cannot be read as one.
var errBadOwner = errors.New("not a tidemark ownership record")

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
		return sinkOwner{}, false, fmt.Errorf("%s is %w (%s): restore it, or delete it to let the next run claim the location "+
			"(or take it over with `tidemark run JOBFILE --adopt-sink`)", joinLoc(s.Root(), ownerKey), errBadOwner, why)
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
