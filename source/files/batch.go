package files

import (
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
)

var _ source.Splitter = (*Plan)(nil)

// Split cuts the plan after its first n files of Take (source.Splitter).
// Take is in the order the plan's bounds took it (oldest first; key order
// for ordered listing), so each batch's state is the one a run bounded to
// the files so far would have committed: timestamp tracking's mark and
// ordered listing's last key never pass a file a later batch reads.
func (p *Plan) Split(n int) (head, rest source.Plan) {
	n = max(1, min(n, len(p.Take)))
	h, r := *p, *p
	h.Take = p.Take[:n:n]
	r.Take = p.Take[n:]
	h.missing, r.missing, h.changed, r.changed = nil, nil, 0, 0
	if len(p.Superseded) > 0 {
		inHead := make(map[string]bool, n)
		for _, f := range h.Take {
			inHead[f.Path] = true
		}
		h.Superseded, r.Superseded = nil, nil
		for _, f := range p.Superseded {
			if inHead[f.Path] {
				h.Superseded = append(h.Superseded, f)
			} else {
				r.Superseded = append(r.Superseded, f)
			}
		}
	}
	// What the listing counted besides the files read goes with the first
	// batch only, so that the batches' counts add up to the plan's.
	r.Unchanged, r.Modified, r.IgnoredModified, r.Deferred, r.Future = 0, 0, 0, 0, 0
	r.Warnings, r.tail = nil, true
	r.base, r.next = &h, nil
	return &h, &r
}

// basis is the state the plan reads and advances from: the state its
// previous batch committed, once it did, else the plan's own base.
func (p *Plan) basis() (bookmark.SourceState, bool) {
	for b := p.base; b != nil; b = b.base {
		if b.next != nil {
			return *b.next, true
		}
	}
	return p.prev, p.hasPrev
}
