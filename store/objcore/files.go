package objcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// Files streams the current file records of one source ctx in Path order:
// the merge of the head version's live segments of the ctx, newest record
// of a path winning, tombstones dropped. It reads the head, its version
// and each segment once, holding one record per segment in memory.
func (s *Store) Files(ctx context.Context, job, srcCtx string) iter.Seq2[bookmark.File, error] {
	return func(yield func(bookmark.File, error) bool) {
		_, v, err := s.headVersion(ctx, job)
		if err != nil {
			yield(bookmark.File{}, fmt.Errorf("reading files of job %q source %q in %s: %w", job, srcCtx, s.root, err))
			return
		}
		for e, err := range s.mergeSegments(ctx, v.Files[srcCtx], mergeCurrent) {
			if err != nil {
				yield(bookmark.File{}, fmt.Errorf("reading files of job %q source %q in %s: %w", job, srcCtx, s.root, err))
				return
			}
			if !yield(e.File, nil) {
				return
			}
		}
	}
}

// committedRuns reads the records of the given runs that count for their
// manifests: committed and not undone, in Seq order; 16 at a time (a
// request each on S3). Unknown runs are left out.
func (s *Store) committedRuns(ctx context.Context, job string, runIDs []string) ([]runObj, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	for _, id := range runIDs {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	recs := make([]*runObj, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, id := range ids {
		g.Go(func() error {
			r, _, err := s.readRun(gctx, job, id, &h)
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			if r.Run.Status == store.StatusSucceeded && !r.Run.Undone {
				recs[i] = &r
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []runObj
	for _, r := range recs {
		if r != nil {
			out = append(out, *r)
		}
	}
	slices.SortFunc(out, func(a, b runObj) int { return cmp.Compare(a.Run.Seq, b.Run.Seq) })
	return out, nil
}

// RunInputs yields the file records the given runs read, superseded ones
// included, ordered by ctx, then path, then run: the merge of the runs'
// own segments, per ctx.
func (s *Store) RunInputs(ctx context.Context, job string, runIDs []string) iter.Seq2[store.FileRecord, error] {
	return func(yield func(store.FileRecord, error) bool) {
		fail := func(err error) {
			yield(store.FileRecord{}, fmt.Errorf("reading inputs of runs of job %q in %s: %w", job, s.root, err))
		}
		runs, err := s.committedRuns(ctx, job, runIDs)
		if err != nil {
			fail(err)
			return
		}
		byCtx := map[string][]segRef{}
		for _, r := range runs { // oldest first: ties in run order
			for _, ref := range r.Inputs {
				byCtx[ref.Ctx] = append(byCtx[ref.Ctx], ref)
			}
		}
		ctxs := make([]string, 0, len(byCtx))
		for c := range byCtx {
			ctxs = append(ctxs, c)
		}
		slices.Sort(ctxs)
		for _, c := range ctxs {
			for e, err := range s.mergeSegments(ctx, byCtx[c], mergeAll) {
				if err != nil {
					fail(err)
					return
				}
				if e.Tomb {
					continue
				}
				if !yield(store.FileRecord{Ctx: c, File: e.File}, nil) {
					return
				}
			}
		}
	}
}

// RunRanges yields the key ranges the given runs recorded, ordered by ctx,
// then run Seq.
func (s *Store) RunRanges(ctx context.Context, job string, runIDs []string) iter.Seq2[store.RangeRecord, error] {
	return func(yield func(store.RangeRecord, error) bool) {
		runs, err := s.committedRuns(ctx, job, runIDs)
		if err != nil {
			yield(store.RangeRecord{}, fmt.Errorf("reading ranges of runs of job %q in %s: %w", job, s.root, err))
			return
		}
		var rs []store.RangeRecord
		for _, r := range runs { // in Seq order
			for _, rg := range r.Ranges {
				rg.RunID = r.Run.RunID
				if rg.Range == nil {
					rg.Range = []byte{}
				}
				rs = append(rs, rg)
			}
		}
		slices.SortStableFunc(rs, func(a, b store.RangeRecord) int { return cmp.Compare(a.Ctx, b.Ctx) })
		for _, rg := range rs {
			if !yield(rg, nil) {
				return
			}
		}
	}
}
