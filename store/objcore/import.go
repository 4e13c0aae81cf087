package objcore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tidemark-etl/tidemark/store"
)

var _ store.Importer = (*Store)(nil)

// importCommit is the commit key of imported committed runs: they were
// committed elsewhere.
const importCommit = "imported"

// ImportJob writes a job's whole history (tidemark state copy): for each
// version, its commit segment of each source ctx (the records it added,
// tombstones of those it superseded) and a version object listing the
// live segments (compacted as commits compact them); for each run, its
// record with outputs, actions, ranges and its own input segments, and
// its index entry. Nothing of it is reachable until the last write, the
// job's head (created with If-None-Match: *, or swapped over a head that
// holds only a lease token): readers take only runs up to the head's Seq.
// A job with runs or versions is refused with store.ErrJobExists.
func (s *Store) ImportJob(ctx context.Context, h store.JobHistory) error {
	if err := store.CheckHistory(&h); err != nil {
		return err
	}
	if err := s.importJob(ctx, h); err != nil {
		return fmt.Errorf("importing job %q into %s: %w", h.Job, s.root, err)
	}
	return nil
}

func (s *Store) importJob(ctx context.Context, h store.JobHistory) error {
	if err := s.writable(); err != nil {
		return err
	}
	if cur, _, err := s.readHead(ctx, h.Job); err != nil {
		return err
	} else if cur.Seq > 0 || cur.Version > 0 {
		return store.ErrJobExists
	}
	job := h.Job
	// Commit segments by version and ctx, and input segments by run.
	type vc struct {
		v   int64
		ctx string
	}
	byVersion := map[vc][]entry{}
	ctxsAt := map[int64][]string{} // the ctxs of byVersion's keys, by version
	add := func(k vc, e entry) {
		if _, ok := byVersion[k]; !ok {
			ctxsAt[k.v] = append(ctxsAt[k.v], k.ctx)
		}
		byVersion[k] = append(byVersion[k], e)
	}
	byRun := map[string]map[string][]entry{}
	for _, f := range h.Files {
		add(vc{f.Added, f.Ctx}, entry{File: f.File, Run: f.RunID})
		if byRun[f.RunID] == nil {
			byRun[f.RunID] = map[string][]entry{}
		}
		byRun[f.RunID][f.Ctx] = append(byRun[f.RunID][f.Ctx], entry{File: f.File, Run: f.RunID})
		if f.Removed != 0 {
			add(vc{f.Removed, f.Ctx}, entry{File: f.File, Run: f.RunID, Tomb: true})
		}
	}
	write := func(srcCtx string, es []entry) (segRef, error) {
		// A path re-read at a version shadows its tombstone there.
		slices.SortStableFunc(es, func(a, b entry) int {
			return cmp.Or(cmp.Compare(a.File.Path, b.File.Path), cmp.Compare(boolInt(!a.Tomb), boolInt(!b.Tomb)))
		})
		w := newSegWriter()
		for i, e := range es {
			if i+1 < len(es) && es[i+1].File.Path == e.File.Path {
				continue // the last of a path wins: the record over the tombstone
			}
			if err := w.add(e); err != nil {
				return segRef{}, err
			}
		}
		return s.writeSegment(ctx, job, srcCtx, w)
	}
	files := map[string][]segRef{}
	prev := ""
	var last versionObj
	lastKey := ""
	for _, v := range h.Versions {
		ctxs := ctxsAt[v.Version.Version]
		slices.Sort(ctxs)
		next := map[string][]segRef{}
		for k, refs := range files {
			next[k] = refs
		}
		for _, c := range ctxs {
			ref, err := write(c, byVersion[vc{v.Version.Version, c}])
			if err != nil {
				return err
			}
			live, err := s.compact(ctx, job, c, append([]segRef{ref}, next[c]...))
			if err != nil {
				return err
			}
			next[c] = live
		}
		files = next
		states, err := encodeStates(v.States)
		if err != nil {
			return err
		}
		obj := versionObj{Version: v.Version.Version, Kind: v.Kind, RunID: v.RunID, At: utc(v.At), By: v.By, Prev: prev,
			States: states, Files: files}
		key := newVersionKey(job, obj.Version)
		if err := s.createJSON(ctx, key, obj); err != nil {
			return err
		}
		prev, last, lastKey = key, obj, key
	}
	ranges := map[string][]store.RangeRecord{}
	for _, r := range h.Ranges {
		ranges[r.RunID] = append(ranges[r.RunID], r.RangeRecord)
	}
	head := headObj{Job: job, Version: last.Version, RunID: last.RunID, UpdatedAt: last.At, VersionKey: lastKey}
	for _, rh := range h.Runs {
		r := runObj{Run: rh.Run, Outputs: rh.Outputs, Actions: rh.Actions, Ranges: ranges[rh.Run.RunID]}
		r.Run.Sources, r.Run.Sinks = nilIfEmpty(r.Run.Sources), nilIfEmpty(r.Run.Sinks)
		for _, c := range slices.Sorted(mapKeys(byRun[rh.Run.RunID])) {
			ref, err := write(c, byRun[rh.Run.RunID][c])
			if err != nil {
				return err
			}
			r.Inputs = append(r.Inputs, ref)
		}
		if r.Run.Status == store.StatusSucceeded {
			r.CommitKey = importCommit
		}
		// Plain PUTs: unreachable until the head names their Seq.
		if _, err := s.putJSON(ctx, runKey(job, r.Run.RunID), r, Cond{}); err != nil {
			return err
		}
		if _, err := s.b.Put(ctx, seqKey(job, r.Run.Seq, r.Run.RunID), nil, Cond{}); err != nil {
			return err
		}
		head.Seq = r.Run.Seq
		switch r.Run.Status {
		case store.StatusSucceeded:
			head.Failed, head.SucceededSeq = 0, r.Run.Seq
			if store.RollsForward(r.Run, r.Outputs) {
				head.Unpublished = append(head.Unpublished, r.Run.RunID)
			}
		case store.StatusFailed:
			head.Failed++
		}
	}
	_, err := s.updateHead(ctx, job, func(cur *headObj) error {
		if cur.Seq > 0 || cur.Version > 0 {
			return store.ErrJobExists
		}
		token, lease := cur.LastToken, cur.Lease
		*cur = head
		cur.LastToken, cur.Lease = token, lease
		return nil
	})
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
