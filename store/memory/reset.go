package memory

import (
	"context"
	"fmt"
	"maps"

	"github.com/tidemark-etl/tidemark/store"
)

// Reset writes a new head version holding the bookmark as run toRunID
// committed it (or an empty one when toRunID is ""), under the job's
// lease: the target version's source states are copied, file and range
// records added after it are deleted and records superseded after it are
// current again, and every succeeded, not yet undone run after the target
// (any mode) is marked undone and returned, oldest first.
func (s *Store) Reset(_ context.Context, job string, token int64, toRunID, by string) ([]store.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	undone, err := s.reset(job, token, toRunID, by)
	if err != nil {
		if toRunID == "" {
			return nil, fmt.Errorf("resetting bookmark of job %q: %w", job, err)
		}
		return nil, fmt.Errorf("rewinding bookmark of job %q to run %s: %w", job, toRunID, err)
	}
	return undone, nil
}

// reset is Reset under s.mu.
func (s *Store) reset(job string, token int64, toRunID, by string) ([]store.Run, error) {
	j := s.job(job)
	if err := j.checkToken(job, token); err != nil {
		return nil, err
	}
	var target store.Run // zero for a full reset: Version 0, Seq 0
	if toRunID != "" {
		rec, err := s.run(job, toRunID)
		if err != nil {
			return nil, err
		}
		target = rec.run
		if err := store.CheckResetTarget(target); err != nil {
			return nil, err
		}
	}
	states := map[string][]byte{}
	if target.Version > 0 {
		states = maps.Clone(j.versions[target.Version-1].states)
	}
	h := j.head(job)
	next := store.Head{Job: job, Version: h.Version + 1, RunID: toRunID, UpdatedAt: s.clock()}
	j.versions = append(j.versions, version{head: next, states: states,
		kind: store.VersionKind(store.KindReset, toRunID), by: by})

	var files []fileRec
	for _, f := range j.files {
		var keep bool
		if keep, f.removed = store.ResetFile(f.added, f.removed, target.Version); keep {
			files = append(files, f)
		}
	}
	j.files = files
	j.rebuildCurrent()
	var ranges []rangeRec
	for _, r := range j.ranges {
		if r.added <= target.Version {
			ranges = append(ranges, r)
		}
	}
	j.ranges = ranges

	var undone []store.Run
	for _, rec := range j.runs[target.Seq:] {
		if store.Undoes(target, rec.run) {
			rec.run.Undone = true
			undone = append(undone, cloneRun(rec.run))
		}
	}
	return undone, nil
}
