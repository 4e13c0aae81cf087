package memory

import (
	"cmp"
	"context"
	"iter"
	"slices"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Files yields the current file records of one source ctx in byte order of
// Path, from a snapshot taken when iteration starts.
func (s *Store) Files(_ context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error] {
	return func(yield func(bookmark.File, error) bool) {
		s.mu.Lock()
		var fs []bookmark.File
		if j, ok := s.jobs[job]; ok {
			for k, i := range j.current {
				if k.ctx == srcCtx {
					fs = append(fs, j.files[i].file)
				}
			}
		}
		s.mu.Unlock()
		slices.SortFunc(fs, func(a, b bookmark.File) int { return cmp.Compare(a.Path, b.Path) })
		for _, f := range fs {
			if !yield(f, nil) {
				return
			}
		}
	}
}

// RunInputs yields the file records the given runs added, superseded ones
// included, ordered by ctx, then path, then the version that added them.
// Records of runs undone by a reset are gone (the reset deleted them).
func (s *Store) RunInputs(_ context.Context, job string, runIDs []string) iter.Seq2[store.FileRecord, error] {
	return func(yield func(store.FileRecord, error) bool) {
		want := setOf(runIDs)
		s.mu.Lock()
		var recs []fileRec
		if j, ok := s.jobs[job]; ok {
			for _, f := range j.files {
				if want[f.run] {
					recs = append(recs, f)
				}
			}
		}
		s.mu.Unlock()
		slices.SortStableFunc(recs, func(a, b fileRec) int {
			return cmp.Or(cmp.Compare(a.ctx, b.ctx), cmp.Compare(a.file.Path, b.file.Path), cmp.Compare(a.added, b.added))
		})
		for _, f := range recs {
			if !yield(store.FileRecord{Ctx: f.ctx, File: f.file}, nil) {
				return
			}
		}
	}
}

// RunRanges yields the key ranges the given runs recorded, ordered by ctx,
// then run Seq. Records of runs undone by a reset are gone.
func (s *Store) RunRanges(_ context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error] {
	return func(yield func(store.RangeRecord, error) bool) {
		want := setOf(runIDs)
		type seqRange struct {
			seq int64
			rec store.RangeRecord
		}
		s.mu.Lock()
		var rs []seqRange
		if j, ok := s.jobs[job]; ok {
			for _, r := range j.ranges {
				if want[r.rec.RunID] {
					rs = append(rs, seqRange{j.byID[r.rec.RunID].run.Seq, cloneRange(r.rec)})
				}
			}
		}
		s.mu.Unlock()
		slices.SortStableFunc(rs, func(a, b seqRange) int {
			return cmp.Or(cmp.Compare(a.rec.Ctx, b.rec.Ctx), cmp.Compare(a.seq, b.seq))
		})
		for _, r := range rs {
			if !yield(r.rec, nil) {
				return
			}
		}
	}
}

// setOf returns the set of ids.
func setOf(ids []string) map[string]bool {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}
