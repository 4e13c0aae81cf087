package objcore

import (
	"container/heap"
	"context"
	"iter"
)

// mergeMode says what a merge of segments yields.
type mergeMode int

const (
	// mergeCurrent yields each path once, from the newest segment that has
	// it, and drops tombstones: the current records (Files).
	mergeCurrent mergeMode = iota
	// mergeCompact is mergeCurrent keeping tombstones: a merged segment
	// that still lies above older ones.
	mergeCompact
	// mergeAll yields every record of every segment, ties in segment
	// order (RunInputs).
	mergeAll
)

// mergeSegments streams the k-way merge of segments (refs newest first
// for mergeCurrent and mergeCompact) in Path order, holding one record
// per segment in memory. A read error is yielded once, last.
func (s *Store) mergeSegments(ctx context.Context, refs []segRef, mode mergeMode) iter.Seq2[entry, error] {
	return func(yield func(entry, error) bool) {
		h := &mergeHeap{}
		defer func() {
			for _, c := range h.items {
				c.r.close()
			}
		}()
		for i, ref := range refs {
			r, err := s.openSegment(ctx, ref)
			if err != nil {
				yield(entry{}, err)
				return
			}
			c := &cursor{r: r, rank: i}
			ok, err := c.advance()
			if err != nil {
				r.close()
				yield(entry{}, err)
				return
			}
			if ok {
				h.items = append(h.items, c)
			} else {
				r.close()
			}
		}
		heap.Init(h)
		var last string
		started := false
		for h.Len() > 0 {
			c := h.items[0]
			e := c.cur
			ok, err := c.advance()
			if err != nil {
				yield(entry{}, err)
				return
			}
			if ok {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
				c.r.close()
			}
			if mode != mergeAll {
				if started && e.File.Path == last {
					continue // an older record of the path
				}
				started, last = true, e.File.Path
				if e.Tomb && mode == mergeCurrent {
					continue
				}
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// cursor is one segment being merged.
type cursor struct {
	r    *segReader
	cur  entry
	rank int // position in the refs: lower wins a tie
}

func (c *cursor) advance() (bool, error) {
	e, ok, err := c.r.next()
	if err != nil || !ok {
		return false, err
	}
	c.cur = e
	return true, nil
}

// mergeHeap orders cursors by path, then rank.
type mergeHeap struct{ items []*cursor }

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.cur.File.Path != b.cur.File.Path {
		return a.cur.File.Path < b.cur.File.Path
	}
	return a.rank < b.rank
}
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)    { h.items = append(h.items, x.(*cursor)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
