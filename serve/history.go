package serve

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"unicode"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/serve/view"
	"github.com/tidemark-etl/tidemark/store"
)

// defaultHistoryLimit is the page size of a job's bookmark history.
const defaultHistoryLimit = 50

// historyPage is GET /api/v1/jobs/{job}/history.
type historyPage struct {
	Versions []store.Version `json:"versions"`
	// NextBefore is the before= of the next (older) page; 0 on the last.
	NextBefore int64 `json:"next_before"`
}

// history is GET /api/v1/jobs/{job}/history?limit=N&before=V: one page of
// the job's bookmark versions (commits, resets, rewinds with who asked),
// newest first.
func (s *server) history(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.PathValue("job")
	limit, before, ok := s.pageOf(w, r, defaultHistoryLimit)
	if !ok {
		return
	}
	// One more than asked for says whether there is a next page.
	vs, err := s.opts.Store.Versions(ctx, name, store.VersionQuery{Limit: limit + 1, Before: before})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	page := historyPage{Versions: []store.Version{}}
	if len(vs) > limit {
		vs = vs[:limit]
		page.NextBefore = vs[limit-1].Version
	}
	page.Versions = append(page.Versions, vs...)
	writeJSON(w, http.StatusOK, page)
}

// bookmarkDiff is a committed run's change to the bookmark: each source
// ctx's state in the version before (nil: the ctx was new) and in the
// version the run committed (nil: the ctx is gone).
type bookmarkDiff struct {
	Version int64                     `json:"version"`
	Before  int64                     `json:"before"`
	Sources map[string]sourceDiffPair `json:"sources"`
}

// sourceDiffPair is one source ctx in a bookmarkDiff.
type sourceDiffPair struct {
	Before *view.Source `json:"before"`
	After  *view.Source `json:"after"`
	// ShownBefore and ShownAfter are what the diff compares of each
	// state, as the source's kind says (bookmark.DiffPairs).
	ShownBefore []bookmark.Pair `json:"shown_before,omitempty"`
	ShownAfter  []bookmark.Pair `json:"shown_after,omitempty"`
}

// diffOf returns the bookmark diff of run rec: nil unless rec committed a
// bookmark version (a succeeded enable run whose version is its commit).
func (s *server) diffOf(ctx context.Context, rec store.Run) (*bookmarkDiff, error) {
	if rec.Status != store.StatusSucceeded || rec.Mode != bookmark.ModeEnable || rec.Version < 1 {
		return nil, nil
	}
	vs, err := s.opts.Store.Versions(ctx, rec.Job, store.VersionQuery{Limit: 1, Before: rec.Version + 1})
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 || vs[0].Version != rec.Version || vs[0].Kind != store.KindCommit || vs[0].RunID != rec.RunID {
		return nil, nil
	}
	after, err := s.opts.Store.SourceStatesAt(ctx, rec.Job, rec.Version)
	if err != nil {
		return nil, err
	}
	before := map[string]bookmark.SourceState{}
	if rec.Version > 1 {
		if before, err = s.opts.Store.SourceStatesAt(ctx, rec.Job, rec.Version-1); err != nil {
			return nil, err
		}
	}
	d := &bookmarkDiff{Version: rec.Version, Before: rec.Version - 1, Sources: map[string]sourceDiffPair{}}
	for _, k := range mergedKeys(before, after) {
		var p sourceDiffPair
		if st, ok := before[k]; ok {
			v := view.SourceOf(st)
			p.Before, p.ShownBefore = &v, bookmark.DiffPairs(st)
		}
		if st, ok := after[k]; ok {
			v := view.SourceOf(st)
			p.After, p.ShownAfter = &v, bookmark.DiffPairs(st)
		}
		d.Sources[k] = p
	}
	return d, nil
}

// mergedKeys returns the keys of a and b, each once.
func mergedKeys(a, b map[string]bookmark.SourceState) []string {
	seen := maps.Clone(a)
	maps.Copy(seen, b)
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	return keys
}

// maxActor bounds the X-Tidemark-Actor value recorded.
const maxActor = 200

// actorOf names who asks for an action, for the bookmark history:
// "serve REMOTE_ADDR" and the X-Tidemark-Actor header if any, without
// control characters and at most maxActor runes of it.
func actorOf(r *http.Request) string {
	by := "serve " + r.RemoteAddr
	a := strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return -1
		}
		return c
	}, r.Header.Get(actorHeader))
	a = strings.TrimSpace(a)
	if rs := []rune(a); len(rs) > maxActor {
		a = string(rs[:maxActor])
	}
	if a != "" {
		by += " " + a
	}
	return by
}
