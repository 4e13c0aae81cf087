package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tidemark-etl/tidemark/serve/view"
	"github.com/tidemark-etl/tidemark/store"
)

// Paging limits: runs of a job, and a run's inputs and outputs.
const (
	defaultRunLimit  = 50
	defaultItemLimit = 100
	maxLimit         = 1000
	// maxAttempts bounds the attempt chain of a run.
	maxAttempts = 100
)

// runsPage is GET /api/v1/jobs/{job}/runs.
type runsPage struct {
	Runs []view.Run `json:"runs"`
	// NextBefore is the before= of the next (older) page; 0 on the last.
	NextBefore int64 `json:"next_before"`
}

// intParam reads a non-negative integer query parameter (def if absent).
func intParam(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, withStatus(http.StatusBadRequest, fmt.Errorf("query parameter %s: want a whole number ≥ 0, got %q", name, v))
	}
	return n, nil
}

// limitParam reads limit= (def if absent or 0), at most maxLimit.
func limitParam(r *http.Request, def int64) (int, error) {
	n, err := intParam(r, "limit", def)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		n = def
	}
	if n > maxLimit {
		return 0, withStatus(http.StatusBadRequest, fmt.Errorf("query parameter limit: at most %d, got %d", maxLimit, n))
	}
	return int(n), nil
}

// runs is GET /api/v1/jobs/{job}/runs?limit=N&before=SEQ: one page of the
// job's runs, newest first, read with a bounded query.
func (s *server) runs(w http.ResponseWriter, r *http.Request) {
	ctx, name := r.Context(), r.PathValue("job")
	limit, before, ok := s.pageOf(w, r, defaultRunLimit)
	if !ok {
		return
	}
	// One more than asked for says whether there is a next page.
	runs, err := s.opts.Store.Runs(ctx, name, store.RunQuery{Limit: limit + 1, BeforeSeq: before})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	page := runsPage{}
	if len(runs) > limit {
		runs = runs[:limit]
		page.NextBefore = runs[limit-1].Seq
	}
	page.Runs = view.Runs(runs)
	writeJSON(w, http.StatusOK, page)
}

// pageOf reads a paged route's limit= and before= and checks that its
// job exists; on an error it has answered and ok is false.
func (s *server) pageOf(w http.ResponseWriter, r *http.Request, defaultLimit int64) (limit int, before int64, ok bool) {
	limit, err := limitParam(r, defaultLimit)
	if err == nil {
		before, err = intParam(r, "before", 0)
	}
	if err == nil {
		_, _, err = s.knownJob(r.Context(), r.PathValue("job"))
	}
	if err != nil {
		s.fail(w, r, 0, err)
		return 0, 0, false
	}
	return limit, before, true
}

// input is one item of a run's input manifest: a file read, or the key
// range read from a SQL table.
type input struct {
	Ctx   string          `json:"ctx"`
	Path  string          `json:"path,omitempty"`
	Size  *int64          `json:"size,omitempty"`
	MTime *int64          `json:"mtime,omitempty"`
	ETag  string          `json:"etag,omitempty"`
	Range json.RawMessage `json:"range,omitempty"`
	Rows  *int64          `json:"rows,omitempty"`
}

// list is one page of a run's inputs or outputs and how many there are.
type list[T any] struct {
	Items []T `json:"items"`
	Total int `json:"total"`
}

// runDetail is GET /api/v1/jobs/{job}/runs/{run}.
type runDetail struct {
	Run      view.Run           `json:"run"`
	Outputs  list[store.Output] `json:"outputs"`
	Inputs   list[input]        `json:"inputs"`
	Attempts []view.Run         `json:"attempts"`
	// BookmarkDiff is the bookmark change the run committed; nil unless
	// it committed a version.
	BookmarkDiff *bookmarkDiff `json:"bookmark_diff"`
	// StartedFrom is the bookmark version the job was at when a run that
	// committed none (failed or running) started (0: the empty bookmark);
	// absent for other runs and when the store's history cannot tell.
	StartedFrom *int64 `json:"started_from,omitempty"`
}

// run is GET /api/v1/jobs/{job}/runs/{run}?offset=&limit=: the run, one
// page of its outputs and of its inputs (the same offset and limit), and
// its attempt chain.
func (s *server) run(w http.ResponseWriter, r *http.Request) {
	ctx, name, id := r.Context(), r.PathValue("job"), r.PathValue("run")
	limit, err := limitParam(r, defaultItemLimit)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	off64, err := intParam(r, "offset", 0)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	offset := int(min(off64, 1<<40))
	rec, err := s.opts.Store.Run(ctx, name, id)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	d := runDetail{Run: view.RunOf(rec), Outputs: list[store.Output]{Items: []store.Output{}}, Inputs: list[input]{Items: []input{}}}
	outs, err := s.opts.Store.Outputs(ctx, name, id)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	d.Outputs.Total = len(outs)
	if offset < len(outs) {
		d.Outputs.Items = outs[offset:min(len(outs), offset+limit)]
	}
	take := func(in input) {
		if d.Inputs.Total >= offset && len(d.Inputs.Items) < limit {
			d.Inputs.Items = append(d.Inputs.Items, in)
		}
		d.Inputs.Total++
	}
	for f, err := range s.opts.Store.RunInputs(ctx, name, []string{id}) {
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		take(input{Ctx: f.Ctx, Path: f.File.Path, Size: &f.File.Size, MTime: &f.File.MTime, ETag: f.File.ETag})
	}
	for g, err := range s.opts.Store.RunRanges(ctx, name, []string{id}) {
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		in := input{Ctx: g.Ctx, Rows: &g.Rows}
		if json.Valid(g.Range) {
			in.Range = g.Range
		} else {
			in.Range, _ = json.Marshal(string(g.Range))
		}
		take(in)
	}
	if d.Attempts, err = s.attempts(r, rec); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if d.BookmarkDiff, err = s.diffOf(ctx, rec); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if d.StartedFrom, err = s.startedFrom(ctx, rec); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// attempts is a run's attempt chain, newest first: the run and the failed
// runs right before it (since the previous succeeded one), at most
// maxAttempts.
func (s *server) attempts(r *http.Request, rec store.Run) ([]view.Run, error) {
	chain := []view.Run{view.RunOf(rec)}
	for prev, err := range store.EachRun(r.Context(), s.opts.Store, rec.Job, rec.Seq, maxAttempts) {
		if err != nil {
			return nil, err
		}
		if prev.Status != store.StatusFailed || len(chain) >= maxAttempts {
			break
		}
		chain = append(chain, view.RunOf(prev))
	}
	return chain, nil
}

// startedFromLimit is how many bookmark versions startedFrom looks back
// through.
const startedFromLimit = 1000

// startedFrom is the bookmark version the job was at when rec started, for
// a run that committed none (failed or running): the newest version made
// at or before its start, 0 when there was none. Nil for other runs, and
// when a version has no time (an older tidemark's) or the run is older
// than the last startedFromLimit versions.
func (s *server) startedFrom(ctx context.Context, rec store.Run) (*int64, error) {
	if rec.Status == store.StatusSucceeded || rec.StartedAt.IsZero() {
		return nil, nil
	}
	var before int64
	for seen := 0; seen < startedFromLimit; {
		vs, err := s.opts.Store.Versions(ctx, rec.Job, store.VersionQuery{Limit: 100, Before: before})
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if v.At.IsZero() {
				return nil, nil
			}
			if !v.At.After(rec.StartedAt) {
				return &v.Version, nil
			}
		}
		if len(vs) < 100 {
			zero := int64(0)
			return &zero, nil
		}
		seen += len(vs)
		before = vs[len(vs)-1].Version
	}
	return nil, nil
}
