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
// location without a record that may not be claimed (unless adopt). Every
// write of the record is conditional on what was read (createOwner,
// putOwner): a claim that races another claim or a publish reads the
// record again and decides again. dry checks and writes nothing.
func claimSink(ctx context.Context, s objstore.Store, sinkCtx string, want sink.Owner, mode bookmark.Mode, adopt bool,
	knows func(runID string) (bool, error), parents func() error, dry bool, log *slog.Logger) error {
	if dry { // the claim that follows says what it does
		log = slog.New(slog.DiscardHandler)
	}
	for range claimAttempts {
		err := claimOnce(ctx, s, sinkCtx, want, mode, adopt, knows, parents, dry, log)
		if errors.Is(err, objstore.ErrExists) || errors.Is(err, objstore.ErrStale) {
			continue // another claimed it or published meanwhile: read what it wrote
		}
		return err
	}
	return fmt.Errorf("claiming %s: its ownership record keeps changing", joinLoc(s.Root(), ownerKey))
}

// claimOnce is one round of claimSink.
func claimOnce(ctx context.Context, s objstore.Store, sinkCtx string, want sink.Owner, mode bookmark.Mode, adopt bool,
	knows func(runID string) (bool, error), parents func() error, dry bool, log *slog.Logger) error {
	put := putOwner
	if dry { // checked only: nothing is written
		put = func(context.Context, objstore.Store, sink.Owner, string) error { return nil }
	}
	cur, version, ok, err := readOwnerVersion(ctx, s)
	if errors.Is(err, errBadOwner) && adopt {
		log.Warn("adopting a sink location whose ownership record is damaged: it is replaced", "sink", sinkCtx, "err", err)
		return put(ctx, s, want, version)
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
		return put(ctx, s, want, version)
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
		// knows the run that last published (or, where none has, the
		// run that claimed the location) and has every version the
		// record has seen, so nothing there is unknown to it. The
		// record moves here, conditionally on what was read; the other
		// store, which does not know this store's runs, is refused from
		// then on, at its claims and at its publishes (recordPublished).
		if cur.Newest() != "" && cur.Version <= want.Version {
			known, err := knowsAll(cur, knows)
			if err != nil {
				return err
			}
			if known {
				log.Info("claiming the sink location for this state store: it holds the history of the one the record names "+
					"(state copy)", "sink", sinkCtx, "previous_state_store", cur.StateStore, "last_run", cur.LastRun,
					"claimed_by", cur.ClaimedBy)
				// claimed_by names this run now, which the store copied
				// from does not know: it may neither take the record back
				// nor purge here from then on.
				moved := want
				moved.LastRun = cur.LastRun
				return put(ctx, s, moved, version)
			}
		}
		// Refused if the location holds anything of it; if not,
		// nothing can be read twice.
		empty, err := holdsNothing(ctx, s)
		if err != nil {
			return err
		}
		if !empty || cur.StateStore != want.StateStore {
			claim, err := unknownClaim(cur, want, knows)
			if err != nil {
				return err
			}
			behind := false
			if cur.Version > want.Version && cur.Newest() != "" {
				if behind, err = knowsAll(cur, knows); err != nil {
					return err
				}
			}
			return &sink.OwnedError{Sink: sinkCtx, Job: want.Job, Version: want.Version, Owner: cur, Empty: empty,
				UnknownClaim: claim, Behind: behind}
		}
		// The state store at the same place was made anew (deleted
		// after a failed first run, say): its predecessor is gone
		// and left nothing here, so the new one takes the record.
		log.Warn("claiming the sink location anew: its record names this job's state store as it was before it was made "+
			"anew, and it holds no output", "sink", sinkCtx, "previous_state_store_id", cur.StateStoreID)
		return put(ctx, s, want, version)
	}
	if !adopt {
		if err := parents(); err != nil {
			return err
		}
	}
	if dry {
		return nil
	}
	if err := createOwner(ctx, s, want); err != nil {
		return err
	}
	log.Info("claimed the sink location for this job", "sink", sinkCtx, "record", joinLoc(s.Root(), ownerKey))
	return nil
}

// unknownClaim is the record's claimed_by when it is all this state does
// not know of the record (its last run known, its version not newer): the
// record was taken over by a run of another copy of the state, or by a
// run that was refused before it was recorded.
func unknownClaim(cur, want sink.Owner, knows func(runID string) (bool, error)) (string, error) {
	if cur.ClaimedBy == "" || cur.LastRun == "" || cur.Version > want.Version {
		return "", nil // nothing published there that this state knows: a lost state reads the same
	}
	for _, id := range []string{cur.ClaimedBy, cur.LastRun} {
		known, err := knows(id)
		if err != nil {
			return "", err
		}
		if known == (id == cur.ClaimedBy) {
			return "", nil
		}
	}
	return cur.ClaimedBy, nil
}

// knowsAll reports whether the state knows every run a record names (its
// last run and the run that claimed the location): then it holds the
// history of the store the record names, up to the record.
func knowsAll(o sink.Owner, knows func(runID string) (bool, error)) (bool, error) {
	for _, id := range []string{o.LastRun, o.ClaimedBy} {
		if id == "" {
			continue
		}
		known, err := knows(id)
		if err != nil || !known {
			return false, err
		}
	}
	return true, nil
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
// tidemark before records existed) is claimed. A location whose record
// names another job, or another state store of the job (handed over by
// `--adopt-sink`, or taken over by a `tidemark state copy` of this one
// after this run claimed it), is refused with a *sink.OwnedError (Publish
// set) before anything is published: its owner's bookmark reads this
// run's input itself. The check and the raise are one conditional write
// (putOwner, createOwner), so a hand-over racing this publish either comes
// first and refuses it, or finds the record naming this run, which the
// new owner does not know, and is refused itself. Idempotent.
func recordPublished(ctx context.Context, s objstore.Store, root string, p sink.Publication) error {
	id, err := p.State.Identity(ctx)
	if err != nil {
		return err
	}
	for range claimAttempts {
		err := recordOnce(ctx, s, root, id, p)
		if errors.Is(err, objstore.ErrExists) || errors.Is(err, objstore.ErrStale) {
			continue // changed meanwhile: read it again
		}
		var owned *sink.OwnedError
		if err != nil && !errors.As(err, &owned) {
			return fmt.Errorf("recording run %s in %s: %w", p.RunID, joinLoc(root, ownerKey), err)
		}
		return err
	}
	return fmt.Errorf("recording run %s in %s: its ownership record keeps changing", p.RunID, joinLoc(root, ownerKey))
}

// recordOnce is one round of recordPublished.
func recordOnce(ctx context.Context, s objstore.Store, root string, id store.Identity, p sink.Publication) error {
	run, jobName, runID := p.Run, p.Job, p.RunID
	cur, version, ok, err := readOwnerVersion(ctx, s)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	enable := run.Mode == bookmark.ModeEnable
	switch {
	case !ok:
		o := sink.Owner{Job: jobName, StateStoreID: id.ID, StateStore: store.Redact(id.Location),
			Version: run.Version, CreatedAt: now, UpdatedAt: now, ClaimedBy: runID}
		if enable {
			o.LastRun = runID
		}
		return createOwner(ctx, s, o)
	case !cur.Owns(jobName, id) && cur.Job == jobName && run.Mode == bookmark.ModeDisable:
		// A disable run of the job under another state: the record
		// stays the owner's (see claimSink).
		return nil
	case !cur.Owns(jobName, id):
		return &sink.OwnedError{Sink: sinkOf(p), Location: layout.Name(root), Job: jobName, State: id, Version: run.Version,
			Owner: cur, Publish: runID}
	case cur.Version < run.Version || enable && cur.Version == run.Version && cur.LastRun == "":
		cur.Version, cur.UpdatedAt, cur.StateStore = run.Version, now, store.Redact(id.Location)
		if enable {
			cur.LastRun = runID
		}
		return putOwner(ctx, s, cur, version)
	}
	return nil
}

// sinkOf is the ctx of the sink a publication is for.
func sinkOf(p sink.Publication) string {
	for _, o := range p.Outputs {
		return o.Sink
	}
	for _, a := range p.Actions {
		return a.Sink
	}
	return ""
}

// errBadOwner marks an ownership record that cannot be read as one.
var errBadOwner = errors.New("not a tidemark ownership record")

// readOwner reads a location's ownership record; ok is false if it has
// none.
func readOwner(ctx context.Context, s objstore.Store) (sink.Owner, bool, error) {
	o, _, ok, err := readOwnerVersion(ctx, s)
	return o, ok, err
}

// readOwnerVersion is readOwner that also returns the record's version
// where the store can replace it conditionally (objstore.Swapper; ""
// where it cannot), for putOwner.
func readOwnerVersion(ctx context.Context, s objstore.Store) (sink.Owner, string, bool, error) {
	data, version, err := readRecord(ctx, s)
	if errors.Is(err, objstore.ErrNotExist) {
		return sink.Owner{}, "", false, nil
	}
	if err != nil {
		return sink.Owner{}, "", false, fmt.Errorf("reading %s: %w", joinLoc(s.Root(), ownerKey), err)
	}
	o, err := decodeOwner(s, data)
	return o, version, err == nil, err
}

// readRecord reads the record's bytes, with its version where the store
// has versions.
func readRecord(ctx context.Context, s objstore.Store) ([]byte, string, error) {
	if sw, ok := s.(objstore.Swapper); ok {
		return sw.ReadVersion(ctx, ownerKey)
	}
	rc, err := s.Open(ctx, ownerKey)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	return data, "", err
}

// decodeOwner decodes a record read from s.
func decodeOwner(s objstore.Store, data []byte) (sink.Owner, error) {
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
		return sink.Owner{}, fmt.Errorf("%s is %w (%s): restore it, or delete it to let the next run claim the location "+
			"(or take it over with `tidemark run JOBFILE --adopt-sink`)", joinLoc(s.Root(), ownerKey), errBadOwner, why)
	}
	return o, nil
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
	return putOwner(ctx, s, o, "")
}

// putOwner replaces a location's record, only if it is still the version
// read (objstore.Swapper: an error wrapping objstore.ErrStale if it
// changed meanwhile); a store without conditional writes, or a version ""
// (a damaged record being replaced by --adopt-sink), replaces it
// whatever it holds.
func putOwner(ctx context.Context, s objstore.Store, o sink.Owner, version string) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if sw, ok := s.(objstore.Swapper); ok && version != "" {
		err = sw.Swap(ctx, ownerKey, data, version)
	} else {
		err = s.Put(ctx, ownerKey, bytes.NewReader(data))
	}
	if err != nil {
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
	return l.checkPurgeOf(ctx, cur, c)
}

// checkPurgeOf is CheckPurge on the record cur.
func (l *location) checkPurgeOf(ctx context.Context, cur sink.Owner, c sink.Claim) error {
	if cur.Owns(c.Job, c.Identity) {
		return nil
	}
	if cur.Job == c.Job && cur.Newest() != "" && cur.Version <= c.Version {
		known, err := knowsAll(cur, func(id string) (bool, error) { return c.Known(ctx, id) })
		if err != nil || known {
			return err
		}
	}
	return &sink.OwnedError{Location: layout.Name(l.root), Job: c.Job, State: c.Identity, Version: c.Version,
		Owner: cur, Purge: true}
}

// TakeForPurge rewrites the record for c's state store at c.Version (the
// version the reset commits) before the purge deletes anything here,
// conditionally on the record CheckPurge's checks passed on: a claim by
// the copy of the state (or the store it was copied from) that lands
// between the reset's checks and its deletes makes the write fail, and
// the purge is refused on reading the record again; one that lands after
// it finds a version that store's state does not have and is refused.
// A location without a record, or with a damaged one, is left as it is
// (CheckPurge).
func (l *location) TakeForPurge(ctx context.Context, c sink.Claim) error {
	for range claimAttempts {
		cur, version, ok, err := readOwnerVersion(ctx, l.objs)
		if errors.Is(err, errBadOwner) || err == nil && !ok {
			return nil
		}
		if err != nil {
			return err
		}
		if err := l.checkPurgeOf(ctx, cur, c); err != nil {
			return err
		}
		if cur.Owns(c.Job, c.Identity) && cur.Version >= c.Version {
			return nil
		}
		taken := cur
		taken.StateStoreID, taken.StateStore = c.Identity.ID, store.Redact(c.Identity.Location)
		taken.Version, taken.UpdatedAt = max(cur.Version, c.Version), time.Now().UTC()
		err = putOwner(ctx, l.objs, taken, version)
		if errors.Is(err, objstore.ErrStale) {
			continue // claimed meanwhile: check again
		}
		return err
	}
	return fmt.Errorf("taking %s over for a purge: its ownership record keeps changing", joinLoc(l.root, ownerKey))
}
