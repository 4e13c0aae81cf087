package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// The one claim rule: who may write at a location that keeps an ownership
// record (a file sink's folder or prefix, an Iceberg table's folder, a
// test kind's run log). A kind gives its location as a Place over a Record
// and calls ClaimAt from its Sink.Claim, CheckPurgeAt and TakeForPurgeAt
// from its PurgeChecker, and RecordPublished from its Location.Publish.
// Every write of the record is conditional on what was read (Record), so
// of two jobs racing for one location only one can claim it, and a claim
// racing a publish or a purge reads the record again and decides again.

// ErrBadOwner marks an ownership record that cannot be read as one (empty,
// not JSON, naming no job or no state store).
var ErrBadOwner = errors.New("not a tidemark ownership record")

// claimAttempts bounds the rounds of read, write, read again when jobs
// race to claim one location.
const claimAttempts = 3

// Record is where a location keeps its ownership record. Writes are
// conditional on what was read; a Record keeps no state of its own, and
// its methods may be called concurrently.
type Record interface {
	// Read returns the record and its version for Replace; ok is false
	// when there is none. A record that is not one is an error wrapping
	// ErrBadOwner, with the version of what is there.
	Read(ctx context.Context) (o Owner, version string, ok bool, err error)
	// Create writes o where no record is: of callers creating at once
	// exactly one succeeds; the others, and a caller that finds a record
	// there, get an error wrapping objstore.ErrExists.
	Create(ctx context.Context, o Owner) error
	// Replace writes o only while the record is still at version (from
	// Read): an error wrapping objstore.ErrStale if it changed or is gone.
	// Version "" replaces whatever is there (a damaged record adopted).
	Replace(ctx context.Context, o Owner, version string) error
	// Name is where the record is, for messages.
	Name() string
}

// Place is a location as the claim rule sees it.
type Place struct {
	// Sink is the sink's ctx ("" for a reset's checks).
	Sink string
	// Location is the location's name in messages (no secrets).
	Location string
	Record   Record
	// Empty reports whether the location holds nothing but its record: no
	// published or staged output, no upload under way.
	Empty func(ctx context.Context) (bool, error)
	// Inside, if set, refuses a location that has no record yet and lies
	// inside another job's location (a *OwnedError with Inside set).
	Inside func(ctx context.Context) error
}

// ClaimAt makes p the job's under c.Identity, as Sink.Claim says: a record
// of the job and its state store at a version the state has, whose last
// run the state knows, passes; a record of the job in another state store
// whose history c's holds (a state copy) moves here; a record of this
// job's store made anew over a location that holds nothing is taken; any
// other is a *OwnedError. With c.Adopt the record is rewritten for c
// whatever it says. A disable run (which reads all input whatever the
// state knows) is refused only by another job's record. c.CheckOnly
// checks and writes nothing.
func ClaimAt(ctx context.Context, p Place, c Claim) error {
	log := c.Log
	if log == nil || c.CheckOnly { // the claim that follows says what it does
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now().UTC()
	want := Owner{Job: c.Job, StateStoreID: c.Identity.ID, StateStore: store.Redact(c.Identity.Location),
		Version: c.Version, CreatedAt: now, UpdatedAt: now, ClaimedBy: c.RunID}
	err := fmt.Errorf("claiming %s: its ownership record keeps changing", p.Record.Name())
	for range claimAttempts {
		err = claimOnce(ctx, p, c, want, log)
		if !errors.Is(err, objstore.ErrExists) && !errors.Is(err, objstore.ErrStale) {
			break
		}
		// Another claimed it or published meanwhile: read what it wrote.
		err = fmt.Errorf("claiming %s: its ownership record keeps changing", p.Record.Name())
	}
	var owned *OwnedError
	switch {
	case errors.As(err, &owned):
		owned.Sink, owned.Location, owned.State = p.Sink, p.Location, c.Identity
	case err != nil && p.Sink != "":
		err = fmt.Errorf("sink %s: %w", p.Sink, err)
	}
	return err
}

// known is c.Known, which a claim without it takes as knowing every run.
func known(ctx context.Context, c Claim) func(runID string) (bool, error) {
	return func(runID string) (bool, error) {
		if c.Known == nil {
			return true, nil
		}
		return c.Known(ctx, runID)
	}
}

// claimOnce is one round of ClaimAt.
func claimOnce(ctx context.Context, p Place, c Claim, want Owner, log *slog.Logger) error {
	knows := known(ctx, c)
	put := p.Record.Replace
	if c.CheckOnly { // checked only: nothing is written
		put = func(context.Context, Owner, string) error { return nil }
	}
	cur, version, ok, err := p.Record.Read(ctx)
	if errors.Is(err, ErrBadOwner) && c.Adopt {
		log.Warn("adopting a sink location whose ownership record is damaged: it is replaced", "sink", p.Sink, "err", err)
		return put(ctx, want, version)
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
	case ok && c.Adopt:
		if !cur.Owns(want.Job, store.Identity{ID: want.StateStoreID}) || cur.Version > want.Version || unknown != "" {
			log.Warn("adopting a sink location: it now belongs to this job and state; the output already there stays",
				"sink", p.Sink, "previous_job", cur.Job, "previous_state_store", cur.StateStore, "previous_version", cur.Version)
		}
		return put(ctx, want, version)
	case ok:
		if cur.Owns(want.Job, store.Identity{ID: want.StateStoreID}) && cur.Version <= want.Version && unknown == "" {
			return nil
		}
		if cur.Job == want.Job && c.Mode == bookmark.ModeDisable {
			// A disable run reads all input whatever the state knows:
			// another or an older state of the job changes nothing.
			return nil
		}
		if cur.Job != want.Job || cur.StateStoreID == want.StateStoreID {
			return &OwnedError{Job: want.Job, Version: want.Version, Owner: cur, UnknownRun: unknown}
		}
		// The job's, of another state store whose history this state
		// holds (`tidemark state copy` moved it here): this state knows
		// the run that last published (or, where none has, the run that
		// claimed the location) and has every version the record has
		// seen, so nothing there is unknown to it. The record moves here,
		// conditionally on what was read; the other store, which does not
		// know this store's runs, is refused from then on, at its claims
		// and at its publishes (RecordPublished).
		if cur.Newest() != "" && cur.Version <= want.Version {
			known, err := knowsAll(cur, knows)
			if err != nil {
				return err
			}
			if known {
				log.Info("claiming the sink location for this state store: it holds the history of the one the record names "+
					"(state copy)", "sink", p.Sink, "previous_state_store", cur.StateStore, "last_run", cur.LastRun,
					"claimed_by", cur.ClaimedBy)
				// claimed_by names this run now, which the store copied
				// from does not know: it may neither take the record back
				// nor purge here from then on.
				moved := want
				moved.LastRun = cur.LastRun
				return put(ctx, moved, version)
			}
		}
		// Refused if the location holds anything of it; if not, nothing
		// can be read twice.
		empty, err := p.Empty(ctx)
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
			return &OwnedError{Job: want.Job, Version: want.Version, Owner: cur, Empty: empty, UnknownClaim: claim, Behind: behind}
		}
		// The state store at the same place was made anew (deleted after
		// a failed first run, say): its predecessor is gone and left
		// nothing here, so the new one takes the record.
		log.Warn("claiming the sink location anew: its record names this job's state store as it was before it was made "+
			"anew, and it holds no output", "sink", p.Sink, "previous_state_store_id", cur.StateStoreID)
		return put(ctx, want, version)
	}
	if !c.Adopt && p.Inside != nil {
		if err := p.Inside(ctx); err != nil {
			return err
		}
	}
	if c.CheckOnly {
		return nil
	}
	if err := p.Record.Create(ctx, want); err != nil {
		return err
	}
	log.Info("claimed the sink location for this job", "sink", p.Sink, "record", p.Record.Name())
	return nil
}

// unknownClaim is the record's claimed_by when it is all this state does
// not know of the record (its last run known, its version not newer): the
// record was taken over by a run of another copy of the state, or by a
// run that was refused before it was recorded.
func unknownClaim(cur, want Owner, knows func(runID string) (bool, error)) (string, error) {
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
func knowsAll(o Owner, knows func(runID string) (bool, error)) (bool, error) {
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

// CheckPurgeAt is PurgeChecker.CheckPurge at p: a reset's purge is refused
// when the record names another job, or another state store whose history
// c's does not hold (as a run's claim, a store that `tidemark state copy`
// filled may act for the record's until that store's runs publish here).
// A location without a record (written before records existed) or with a
// damaged one is passed over: the purge deletes only the run's own
// output.
func CheckPurgeAt(ctx context.Context, p Place, c Claim) error {
	cur, _, ok, err := p.Record.Read(ctx)
	if errors.Is(err, ErrBadOwner) || err == nil && !ok {
		return nil
	}
	if err != nil {
		return err
	}
	return checkPurgeOf(ctx, p, cur, c)
}

// checkPurgeOf is CheckPurgeAt on the record cur.
func checkPurgeOf(ctx context.Context, p Place, cur Owner, c Claim) error {
	if cur.Owns(c.Job, c.Identity) {
		return nil
	}
	if cur.Job == c.Job && cur.Newest() != "" && cur.Version <= c.Version {
		known, err := knowsAll(cur, known(ctx, c))
		if err != nil || known {
			return err
		}
	}
	return &OwnedError{Sink: p.Sink, Location: p.Location, Job: c.Job, State: c.Identity, Version: c.Version,
		Owner: cur, Purge: true}
}

// TakeForPurgeAt is PurgeChecker.TakeForPurge at p: it rewrites the record
// for c's state store at c.Version (the version the reset commits) before
// the purge deletes anything, conditionally on the record CheckPurgeAt's
// checks passed on: a claim by the copy of the state (or the store it was
// copied from) that lands between the reset's checks and its deletes makes
// the write fail, and the purge is refused on reading the record again;
// one that lands after it finds a version that store's state does not
// have and is refused. A location without a record, or with a damaged
// one, is left as it is.
func TakeForPurgeAt(ctx context.Context, p Place, c Claim) error {
	for range claimAttempts {
		cur, version, ok, err := p.Record.Read(ctx)
		if errors.Is(err, ErrBadOwner) || err == nil && !ok {
			return nil
		}
		if err != nil {
			return err
		}
		if err := checkPurgeOf(ctx, p, cur, c); err != nil {
			return err
		}
		if cur.Owns(c.Job, c.Identity) && cur.Version >= c.Version {
			return nil
		}
		taken := cur
		taken.StateStoreID, taken.StateStore = c.Identity.ID, store.Redact(c.Identity.Location)
		taken.Version, taken.UpdatedAt = max(cur.Version, c.Version), time.Now().UTC()
		err = p.Record.Replace(ctx, taken, version)
		if errors.Is(err, objstore.ErrStale) {
			continue // claimed meanwhile: check again
		}
		return err
	}
	return fmt.Errorf("taking %s over for a purge: its ownership record keeps changing", p.Record.Name())
}

// RecordPublished raises p's ownership record to the run (enable runs)
// and the version it committed, before the run's output is published
// there. A location without a record (a run committed by a tidemark
// before records existed) is claimed. A location whose record names
// another job, or another state store of the job (handed over by
// `--adopt-sink`, or taken over by a `tidemark state copy` of this one
// after this run claimed it), is refused with a *OwnedError (Publish set)
// before anything is published: its owner's bookmark reads this run's
// input itself. The check and the raise are one conditional write, so a
// hand-over racing this publish either comes first and refuses it, or
// finds the record naming this run, which the new owner does not know,
// and is refused itself. Idempotent.
func RecordPublished(ctx context.Context, p Place, pub Publication) error {
	id, err := pub.State.Identity(ctx)
	if err != nil {
		return err
	}
	for range claimAttempts {
		err := recordOnce(ctx, p, id, pub)
		if errors.Is(err, objstore.ErrExists) || errors.Is(err, objstore.ErrStale) {
			continue // changed meanwhile: read it again
		}
		var owned *OwnedError
		if err != nil && !errors.As(err, &owned) {
			return fmt.Errorf("recording run %s in %s: %w", pub.RunID, p.Record.Name(), err)
		}
		return err
	}
	return fmt.Errorf("recording run %s in %s: its ownership record keeps changing", pub.RunID, p.Record.Name())
}

// recordOnce is one round of RecordPublished.
func recordOnce(ctx context.Context, p Place, id store.Identity, pub Publication) error {
	run, jobName, runID := pub.Run, pub.Job, pub.RunID
	cur, version, ok, err := p.Record.Read(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	enable := run.Mode == bookmark.ModeEnable
	switch {
	case !ok:
		o := Owner{Job: jobName, StateStoreID: id.ID, StateStore: store.Redact(id.Location),
			Version: run.Version, CreatedAt: now, UpdatedAt: now, ClaimedBy: runID}
		if enable {
			o.LastRun = runID
		}
		return p.Record.Create(ctx, o)
	case !cur.Owns(jobName, id) && cur.Job == jobName && run.Mode == bookmark.ModeDisable:
		// A disable run of the job under another state: the record stays
		// the owner's (see ClaimAt).
		return nil
	case !cur.Owns(jobName, id):
		return &OwnedError{Sink: p.Sink, Location: p.Location, Job: jobName, State: id, Version: run.Version,
			Owner: cur, Publish: runID}
	case cur.Version < run.Version || enable && cur.Version == run.Version && cur.LastRun == "":
		cur.Version, cur.UpdatedAt, cur.StateStore = run.Version, now, store.Redact(id.Location)
		if enable {
			cur.LastRun = runID
		}
		return p.Record.Replace(ctx, cur, version)
	}
	return nil
}
