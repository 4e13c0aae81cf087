package objcore

import (
	"context"
	"fmt"
)

// Compaction keeps the number of live segments of a ctx small, so that a
// run reads a bounded number of objects however many files were recorded.
// Segments are kept newest first; after a commit pushes its own segment,
// the newest two are merged while the newer holds at least half as many
// records as the older (sizes at least double down the list, so there are
// at most log2 of the records of them, and each record is rewritten about
// log2 times in all), and while there are more than maxSegments. A merge
// that reaches the oldest segment drops tombstones.
const maxSegments = 8

// compact merges segments as the rule above says and returns the new list.
func (s *Store) compact(ctx context.Context, job, srcCtx string, refs []segRef) ([]segRef, error) {
	for len(refs) >= 2 && (refs[0].Count*2 >= refs[1].Count || len(refs) > maxSegments) {
		merged, err := s.mergeInto(ctx, job, srcCtx, refs[:2], len(refs) == 2)
		if err != nil {
			return nil, fmt.Errorf("compacting segments of source %q: %w", srcCtx, err)
		}
		refs = append([]segRef{merged}, refs[2:]...)
	}
	return refs, nil
}

// mergeInto writes the merge of refs (newest first) as one segment; bottom
// says nothing lies below them, so tombstones can go.
func (s *Store) mergeInto(ctx context.Context, job, srcCtx string, refs []segRef, bottom bool) (segRef, error) {
	mode := mergeCompact
	if bottom {
		mode = mergeCurrent
	}
	w := newSegWriter()
	for e, err := range s.mergeSegments(ctx, refs, mode) {
		if err != nil {
			return segRef{}, err
		}
		if err := w.add(e); err != nil {
			return segRef{}, err
		}
	}
	return s.writeSegment(ctx, job, srcCtx, w)
}
