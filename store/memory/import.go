package memory

import (
	"context"
	"fmt"

	"github.com/tidemark-etl/tidemark/store"
)

var _ store.Importer = (*Store)(nil)

// ImportJob writes a job's history as it was (store.Importer). The job must
// have neither runs nor versions here; a lease on it stays as it is.
func (s *Store) ImportJob(_ context.Context, h store.JobHistory) error {
	if err := store.CheckHistory(&h); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.jobs[h.Job]; ok && (len(j.runs) > 0 || len(j.versions) > 0) {
		return fmt.Errorf("importing job %q: %w", h.Job, store.ErrJobExists)
	}
	j := newJobState()
	if old, ok := s.jobs[h.Job]; ok {
		j.lastToken, j.lease = old.lastToken, old.lease
	}
	for _, v := range h.Versions {
		states, err := encodeStates(v.States)
		if err != nil {
			return fmt.Errorf("importing job %q: encoding the states of version %d: %w", h.Job, v.Version.Version, err)
		}
		head := store.Head{Job: h.Job, Version: v.Version.Version, RunID: v.RunID, UpdatedAt: utc(v.At)}
		j.versions = append(j.versions, version{head: head, states: states, kind: v.Kind, by: v.By})
	}
	for _, r := range h.Runs {
		run := cloneRun(r.Run)
		run.StartedAt, run.FinishedAt = utc(run.StartedAt), utc(run.FinishedAt)
		rec := &runRec{run: run, outputs: cloneOutputs(r.Outputs)}
		for i := range rec.outputs {
			rec.outputs[i].RunID = run.RunID
		}
		for _, a := range r.Actions {
			rec.actions = append(rec.actions, cloneAction(a))
		}
		j.runs = append(j.runs, rec)
		j.byID[run.RunID] = rec
	}
	for _, f := range h.Files {
		j.files = append(j.files, fileRec{ctx: f.Ctx, file: f.File, run: f.RunID, added: f.Added, removed: f.Removed})
	}
	j.rebuildCurrent()
	if len(j.current) != countCurrent(h.Files) {
		return fmt.Errorf("importing job %q: the history has two current records of one path", h.Job)
	}
	for _, r := range h.Ranges {
		j.ranges = append(j.ranges, rangeRec{rec: cloneRange(r.RangeRecord), added: r.Added})
	}
	s.jobs[h.Job] = j
	return nil
}

// countCurrent counts the records not superseded.
func countCurrent(files []store.FileHistory) int {
	n := 0
	for _, f := range files {
		if f.Removed == 0 {
			n++
		}
	}
	return n
}
