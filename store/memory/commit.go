package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidemark-etl/tidemark/store"
)

// Commit makes c durable at once: it checks the fencing token, (with
// Advance) the base version and every record, then writes the new bookmark
// version, the file and range records, the finished run record, its outputs
// and actions. On any error nothing changed.
//
// The run must be running: begun with BeginRun, or unknown, in which case
// Commit records it. Sources, Added, Superseded and Ranges without Advance
// are refused rather than dropped.
func (s *Store) Commit(_ context.Context, c store.Commit) (store.Head, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.commit(c)
	if err != nil {
		return store.Head{}, fmt.Errorf("committing run %s of job %q: %w", c.Run.RunID, c.Job, err)
	}
	return h, nil
}

// commit is Commit under s.mu.
func (s *Store) commit(c store.Commit) (store.Head, error) {
	if err := store.CheckCommit(&c); err != nil {
		return store.Head{}, err
	}
	j := s.job(c.Job)
	if err := j.checkToken(c.Job, c.Token); err != nil {
		return store.Head{}, err
	}
	h := j.head(c.Job)
	if err := store.CheckBase(c, h); err != nil {
		return store.Head{}, err
	}
	rec, err := s.run(c.Job, c.Run.RunID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if c.Run.RunID == "" {
			return store.Head{}, fmt.Errorf("run needs a job and a run id")
		}
	default:
		if err := store.CheckRunning(rec.run); err != nil {
			return store.Head{}, err
		}
	}
	if err := j.checkRecords(c); err != nil {
		return store.Head{}, err
	}
	states, err := encodeStates(c.Sources)
	if err != nil {
		return store.Head{}, fmt.Errorf("encoding source states: %w", err)
	}
	cat := s.cat
	if !c.Catalog.Empty() {
		if cat, err = s.cat.next(c.Catalog, s.clock); err != nil {
			return store.Head{}, fmt.Errorf("changing the catalog: %w", err)
		}
	}

	// Everything is checked: from here on nothing fails.
	if rec == nil {
		if _, err := s.insertRun(c.Run); err != nil {
			return store.Head{}, err
		}
		rec = j.byID[c.Run.RunID]
	}
	s.cat = cat
	now := s.clock()
	if c.Advance {
		h = store.Head{Job: c.Job, Version: c.BaseVersion + 1, RunID: c.Run.RunID, UpdatedAt: now}
		j.versions = append(j.versions, version{head: h, states: states, kind: store.KindCommit})
		for _, r := range c.Superseded {
			k := fileKey{r.Ctx, r.File.Path}
			j.files[j.current[k]].removed = h.Version
			delete(j.current, k)
		}
		for _, r := range c.Added {
			j.current[fileKey{r.Ctx, r.File.Path}] = len(j.files)
			j.files = append(j.files, fileRec{ctx: r.Ctx, file: r.File, run: c.Run.RunID, added: h.Version})
		}
		for _, r := range c.Ranges {
			r = cloneRange(r)
			r.RunID = c.Run.RunID
			j.ranges = append(j.ranges, rangeRec{rec: r, added: h.Version})
		}
	}
	finished := c.Run.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	r := &rec.run
	r.Status, r.FinishedAt, r.Version, r.Error = store.StatusSucceeded, utc(finished), h.Version, ""
	r.Sources, r.Sinks = cloneCounts(c.Run.Sources), cloneCounts(c.Run.Sinks)
	if c.Run.JobFile != "" {
		r.JobFile = c.Run.JobFile
	}
	for _, o := range c.Outputs {
		o = cloneOutput(o)
		o.RunID = c.Run.RunID
		rec.outputs = append(rec.outputs, o)
	}
	for _, a := range c.Actions {
		rec.actions = append(rec.actions, cloneAction(a))
	}
	return h, nil
}

// checkRecords checks what a commit would write, as a database's
// constraints would (store.CheckFileRecords, store.CheckOutputs).
func (j *jobState) checkRecords(c store.Commit) error {
	err := store.CheckFileRecords(c, func(srcCtx, path string) bool {
		_, ok := j.current[fileKey{srcCtx, path}]
		return ok
	})
	if err != nil {
		return err
	}
	var recorded []store.Output
	if rec, ok := j.byID[c.Run.RunID]; ok {
		recorded = rec.outputs
	}
	return store.CheckOutputs(c, recorded)
}
