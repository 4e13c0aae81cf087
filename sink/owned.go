package sink

import (
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/internal/layout"
	"github.com/tidemark-etl/tidemark/store"
)

// ErrOutputLost marks a committed run whose output can no longer be
// published: a staged file or a prepared upload of it is gone (deleted,
// aborted by a lifecycle rule).
var ErrOutputLost = errors.New("the run's output is lost: its staged file or upload is gone")

// Owner is a file sink location's ownership record: the job that
// writes there, the state store that holds its bookmark, and the last run
// (and its bookmark version) that published there. It is what makes a
// folder recognisably a tidemark sink, and what tells a lost, replaced or
// older state from the owner's.
type Owner struct {
	Job          string `json:"job"`
	StateStoreID string `json:"state_store_id"`
	// StateStore is where the state store was, for people; the ID decides.
	StateStore string `json:"state_store"`
	Version    int64  `json:"version"`
	// LastRun is the enable run that last published there ("" until one
	// did): a state that has no record of it is older than the location,
	// whatever its version (a reset raises the version too).
	LastRun string `json:"last_run,omitempty"`
	// ClaimedBy is the run that claimed the location for the state store
	// (made the record, or moved it there from the store a copy was made
	// of): a state that knows it, and LastRun, holds the history the
	// record was made in, even before a run published there; the store
	// copied from does not know the copy's claiming run. Empty in records
	// of an older tidemark.
	ClaimedBy string    `json:"claimed_by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Newest is the newest run the record names: the last run that published,
// else the run that claimed the location ("" if neither is known).
func (o Owner) Newest() string {
	if o.LastRun != "" {
		return o.LastRun
	}
	return o.ClaimedBy
}

// Owns reports whether the record names this job of this state store.
func (o Owner) Owns(jobName string, id store.Identity) bool {
	return o.Job == jobName && o.StateStoreID == id.ID
}

// OwnedError refuses a run at a sink location whose ownership record
// does not name the job of this state store, or names a later bookmark
// version than the state holds (exit 2). Nothing was written or deleted.
type OwnedError struct {
	Sink     string // the sink's ctx
	Location string
	Job      string
	State    store.Identity
	Version  int64 // the state's bookmark version
	Owner    Owner
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
	// Purge is set when a reset's --purge-output was refused: the record
	// names another job, or a state store whose history this one does not
	// hold (its runs published there since).
	Purge bool
	// Publish is the committed run that was refused when it came to
	// publish: the location was handed over after the run claimed it.
	Publish string
	// Table is set when Owner is a SQL table sink's ownership row.
	Table bool
	// UnknownClaim is the record's claimed_by when it is the one thing of
	// the record this state has no record of.
	UnknownClaim string
	// Behind: the record names another state store of the job at a later
	// version than this state's, and this state knows the runs it names:
	// that store reset the job (a purge, say) after this state was copied.
	Behind bool
}

func (e *OwnedError) Error() string {
	o := e.Owner
	switch {
	case e.Publish != "" && e.LastRun != "":
		return fmt.Sprintf("sink %s: run %s of job %q committed in the state store %s (id %s), but its rows were not loaded: "+
			"table %s holds rows of run %s of the job (its marker in _tidemark_runs), which this state store has no record "+
			"of: another state store (a copy made with `tidemark state copy`) runs the job now, and its bookmark reads this "+
			"run's input itself; loading it too would put it there twice. Nothing of the run was loaded. Run the job from "+
			"the state store that loaded run %s. Only if that store is given up (gone, or refused at another sink of the "+
			"job): `tidemark run JOBFILE --adopt-sink` from this one takes every sink over and loads this run (what the "+
			"other store loaded of the same input stays: delete it first, or expect it twice)", e.Sink, e.Publish, e.Job,
			e.State.Location, e.State.ID, e.Location, e.LastRun, e.LastRun)
	case e.Publish != "" && e.Table:
		return fmt.Sprintf("sink %s: run %s of job %q committed in the state store %s (id %s), but its rows were not loaded: "+
			"table %s was taken over by the state store %s (id %s) after the run began (`tidemark state copy` and a run "+
			"from the copy), whose bookmark reads this run's input itself; loading it too would put it there twice. Nothing "+
			"of the run was loaded. Run the job from the state store that owns the table. Only if that store is given up "+
			"(gone, or refused at another sink of the job): `tidemark run JOBFILE --adopt-sink` from this one takes every "+
			"sink over and loads this run (what the other store loaded of the same input stays: delete it first, or "+
			"expect it twice)", e.Sink, e.Publish, e.Job, e.State.Location, e.State.ID,
			e.Location, o.StateStore, o.StateStoreID)
	case o.Job == e.Job && e.Behind:
		return fmt.Sprintf("sink %s: %s belongs to job %q of the state store %s (id %s) at bookmark version %d, later than "+
			"this state store's, %s (id %s, version %d), which was copied from it (or from a common original) before that "+
			"store reset the job (`bookmark reset`, perhaps with --purge-output): this state counts output as published that "+
			"may have been deleted there, and running on would lose it. Run the job from that store, or copy its state again "+
			"(`tidemark state copy`)", e.Sink, e.Location, o.Job, o.StateStore, o.StateStoreID, o.Version, e.State.Location,
			e.State.ID, e.Version)
	case e.Table && !e.Purge:
		return fmt.Sprintf("sink %s: table %s belongs to job %q of the state store %s (id %s) (its row in _tidemark_owners), "+
			"not to this one, %s (id %s), whose state does not hold that store's history (the store was copied before that "+
			"store's claim or reset, or another store runs the job): running on would load input again that the table "+
			"already holds, or lose rows that store counts as loaded. Run the job from the state store that owns the table; "+
			"or take the table over on purpose with `tidemark run JOBFILE --adopt-sink` (the rows already there stay)",
			e.Sink, e.Location, e.Job, o.StateStore, o.StateStoreID, e.State.Location, e.State.ID)
	case e.Publish != "":
		return fmt.Sprintf("sink %s: run %s of job %q committed in the state store %s (id %s), but its output was not "+
			"published: %s was handed over to job %q of the state store %s (id %s) after the run began (`tidemark state "+
			"copy` and a run from the copy, or --adopt-sink), whose bookmark reads this run's input itself; publishing it "+
			"too would put it there twice. Nothing of the run was published (its staged files are left under _tidemark/). "+
			"Run the job from the state store that owns the location", e.Sink, e.Publish, e.Job, e.State.Location,
			e.State.ID, e.Location, o.Job, o.StateStore, o.StateStoreID)
	case e.Purge && e.LastRun != "":
		return fmt.Sprintf("sink %s: table %s holds rows of run %s of job %q (its marker in _tidemark_runs), which the state "+
			"store %s (id %s) has no record of: another state store (a copy made with `tidemark state copy`) runs the job now, "+
			"and its bookmark counts the rows there as loaded; deleting them would lose those records for good. Nothing was "+
			"reset or deleted. Purge from the state store that runs the job, or reset here without --purge-output",
			e.Sink, e.Location, e.LastRun, e.Job, e.State.Location, e.State.ID)
	case e.Purge:
		return fmt.Sprintf("sink %s: %s belongs to job %q of the state store %s (id %s) now, not to job %q of this one, %s "+
			"(id %s): that store's bookmark counts the output there as published, and deleting it would lose those records "+
			"for good. Nothing was reset or deleted. Purge from the state store that owns the location, or reset here "+
			"without --purge-output", e.Sink, e.Location, o.Job, o.StateStore, o.StateStoreID, e.Job, e.State.Location, e.State.ID)
	case e.Inside != "":
		return fmt.Sprintf("sink %s: %s lies inside %s, the sink location of job %q of the state store %s (id %s): its readers "+
			"would take job %q's files for that job's, and that job's runs may replace or delete them. Give this job a sink "+
			"path outside it (or write there anyway with `tidemark run JOBFILE --adopt-sink`)",
			e.Sink, e.Location, layout.Name(e.Inside), o.Job, o.StateStore, o.StateStoreID, e.Job)
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
	case o.Job == e.Job && e.UnknownClaim != "":
		return fmt.Sprintf("sink %s: %s was taken over for the state store %s (id %s) by run %s of job %q (claimed_by in "+
			"its ownership record), which this state store, %s (id %s), has no record of; it knows the rest of the "+
			"location's history. Either a copy of this state (`tidemark state copy`) runs the job there now: run it from "+
			"that store; or run %s was refused at another sink before it was recorded (a tidemark that claimed sinks one "+
			"at a time), and no store knows it: then take the location back with `tidemark run JOBFILE --adopt-sink` "+
			"(nothing is read twice: this state holds the location's history)", e.Sink, e.Location, o.StateStore,
			o.StateStoreID, e.UnknownClaim, o.Job, e.State.Location, e.State.ID, e.UnknownClaim)
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
