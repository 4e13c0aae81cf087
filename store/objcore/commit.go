package objcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/tidemark-etl/tidemark/store"
)

// errRebuild means the head moved under a commit in a way that changes
// what it writes (a non-advancing commit records the version it read):
// build it again.
var errRebuild = errors.New("head moved, rebuild the commit")

// Commit makes c durable. It writes, as new immutable objects, the
// commit's own segment per source ctx (its added records and tombstones
// of superseded ones) and any segment compaction merged, the new version
// (states and live segments), and the commit object (the final run
// record with outputs, actions, ranges and input segments). Then one swap
// of the job's head, If-Match, checks the fencing token and the base
// version and points the head at the new version: that swap is the
// commit point, and nothing before it is visible through the head. Last,
// it replaces the run record with the commit object (the swap recorded
// that as pending, so a crash here is finished by the next write).
//
// When the swap's answer is lost, the head read back tells: it holds the
// new version's key (or the swap's Op) exactly when the commit applied.
func (s *Store) Commit(ctx context.Context, c store.Commit) (store.Head, error) {
	if err := store.CheckCommit(&c); err != nil {
		return store.Head{}, fmt.Errorf("committing run %s of job %q: %w", c.Run.RunID, c.Job, err)
	}
	for range 10 {
		h, err := s.commit(ctx, c)
		if errors.Is(err, errRebuild) {
			continue
		}
		if err != nil {
			return store.Head{}, fmt.Errorf("committing run %s of job %q in %s: %w", c.Run.RunID, c.Job, s.root, err)
		}
		return h, nil
	}
	return store.Head{}, fmt.Errorf("committing run %s of job %q in %s: the head kept moving", c.Run.RunID, c.Job, s.root)
}

func (s *Store) commit(ctx context.Context, c store.Commit) (store.Head, error) {
	if err := s.writable(); err != nil {
		return store.Head{}, err
	}
	h0, _, err := s.readHead(ctx, c.Job)
	if err != nil {
		return store.Head{}, err
	}
	if err := h0.checkToken(c.Token); err != nil {
		return store.Head{}, err
	}
	if err := store.CheckBase(c, h0.head()); err != nil {
		return store.Head{}, err
	}
	if c.Run.RunID == "" {
		return store.Head{}, fmt.Errorf("run needs a job and a run id")
	}
	rec, etag, err := s.readRun(ctx, c.Job, c.Run.RunID, &h0)
	if errors.Is(err, store.ErrNotFound) {
		// A run not begun: record it first, as BeginRun would.
		if _, err := s.beginRun(ctx, c.Token, c.Run); err != nil {
			return store.Head{}, err
		}
		return store.Head{}, errRebuild
	}
	if err != nil {
		return store.Head{}, err
	}
	if err := store.CheckRunning(rec.Run); err != nil {
		return store.Head{}, err
	}
	if err := store.CheckOutputs(c, rec.Outputs); err != nil {
		return store.Head{}, err
	}
	now, err := s.Now(ctx)
	if err != nil {
		return store.Head{}, err
	}

	final := rec
	version := h0.Version
	newKey := ""
	if c.Advance {
		version = c.BaseVersion + 1
		newKey = newVersionKey(c.Job, version)
		inputs, files, err := s.writeFiles(ctx, c, h0)
		if err != nil {
			return store.Head{}, err
		}
		states, err := encodeStates(c.Sources)
		if err != nil {
			return store.Head{}, err
		}
		v := versionObj{Version: version, Kind: store.KindCommit, RunID: c.Run.RunID, At: now, Prev: h0.VersionKey,
			States: states, Files: files}
		if err := s.createJSON(ctx, newKey, v); err != nil {
			return store.Head{}, err
		}
		final.Inputs = inputs
		for _, rg := range c.Ranges {
			rg.RunID = c.Run.RunID
			final.Ranges = append(final.Ranges, rg)
		}
	}
	r := &final.Run
	finished := c.Run.FinishedAt
	if finished.IsZero() {
		finished = now
	}
	r.Status, r.FinishedAt, r.Version, r.Error = store.StatusSucceeded, utc(finished), version, ""
	r.Sources, r.Sinks = nilIfEmpty(c.Run.Sources), nilIfEmpty(c.Run.Sinks)
	if c.Run.JobFile != "" {
		r.JobFile = c.Run.JobFile
	}
	if c.Run.Host != "" {
		r.Host = c.Run.Host
	}
	for _, o := range c.Outputs {
		o.RunID = c.Run.RunID
		final.Outputs = append(final.Outputs, o)
	}
	final.Actions = append(final.Actions, c.Actions...)
	commitKey := jobKey(c.Job) + "commits/" + esc(c.Run.RunID) + "-" + nonce() + ".json"
	final.CommitKey = commitKey
	if err := s.createJSON(ctx, commitKey, final); err != nil {
		return store.Head{}, err
	}
	if !c.Catalog.Empty() {
		// Reserved now, visible once the swap below commits the run.
		p := catPending{ID: nonce(), Job: c.Job, RunID: c.Run.RunID, Token: c.Token, CommitKey: commitKey}
		if err := s.reserveCatalog(ctx, c.Catalog, p); err != nil {
			return store.Head{}, err
		}
		defer s.settleCatalog(context.WithoutCancel(ctx))
	}

	applied := false
	h, err := s.updateHead(ctx, c.Job, func(h *headObj) error {
		if newKey != "" && h.VersionKey == newKey {
			applied = true // our swap applied; its answer was lost
			return errNoChange
		}
		if err := h.checkToken(c.Token); err != nil {
			return err
		}
		if h.VersionKey != h0.VersionKey || h.Version != h0.Version {
			if c.Advance {
				return fmt.Errorf("planned against version %d, head is %d (run %s): %w",
					c.BaseVersion, h.Version, h.RunID, store.ErrVersionConflict)
			}
			return errRebuild
		}
		if c.Advance {
			h.Version, h.RunID, h.UpdatedAt, h.VersionKey = version, c.Run.RunID, now, newKey
		}
		h.Failed = 0
		h.SucceededSeq = max(h.SucceededSeq, final.Run.Seq)
		h.Pending = append(h.Pending, patch{RunID: c.Run.RunID, Commit: commitKey})
		if slices.ContainsFunc(final.Outputs, func(o store.Output) bool { return !o.Published }) {
			h.Unpublished = append(h.Unpublished, c.Run.RunID)
		}
		return nil
	})
	if err != nil {
		return store.Head{}, err
	}
	if applied {
		return h.head(), nil
	}
	// The commit is made; now the run record says so (else the next
	// write of the head does it).
	if _, err := s.putJSON(ctx, runKey(c.Job, c.Run.RunID), final, Cond{IfMatch: etag}); err != nil {
		_ = s.applyPending(ctx, c.Job, h.Pending)
	} else {
		s.markApplied(patch{RunID: c.Run.RunID, Commit: commitKey})
	}
	return h.head(), nil
}

// writeFiles writes the commit's segment of each source ctx it touches
// and compacts the ctx's segments; it returns the run's input segments
// and the new version's live segments of every ctx.
func (s *Store) writeFiles(ctx context.Context, c store.Commit, h0 headObj) ([]segRef, map[string][]segRef, error) {
	files := map[string][]segRef{}
	if h0.VersionKey != "" {
		base, err := s.readVersion(ctx, h0.VersionKey)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range base.Files {
			files[k] = v
		}
	}
	current, err := s.currentOf(ctx, c, files)
	if err != nil {
		return nil, nil, err
	}
	if err := store.CheckFileRecords(c, func(srcCtx, path string) bool { return current[[2]string{srcCtx, path}] }); err != nil {
		return nil, nil, err
	}
	byCtx := map[string][]entry{}
	added := map[[2]string]bool{}
	for _, r := range c.Added {
		added[[2]string{r.Ctx, r.File.Path}] = true
		byCtx[r.Ctx] = append(byCtx[r.Ctx], entry{File: r.File, Run: c.Run.RunID})
	}
	for _, r := range c.Superseded {
		if !added[[2]string{r.Ctx, r.File.Path}] {
			byCtx[r.Ctx] = append(byCtx[r.Ctx], entry{File: r.File, Run: c.Run.RunID, Tomb: true})
		}
	}
	var inputs []segRef
	ctxs := make([]string, 0, len(byCtx))
	for k := range byCtx {
		ctxs = append(ctxs, k)
	}
	slices.Sort(ctxs)
	for _, srcCtx := range ctxs {
		es := byCtx[srcCtx]
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.File.Path, b.File.Path) })
		w := newSegWriter()
		for _, e := range es {
			if err := w.add(e); err != nil {
				return nil, nil, err
			}
		}
		ref, err := s.writeSegment(ctx, c.Job, srcCtx, w)
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, ref)
		live, err := s.compact(ctx, c.Job, srcCtx, append([]segRef{ref}, files[srcCtx]...))
		if err != nil {
			return nil, nil, err
		}
		files[srcCtx] = live
	}
	return inputs, files, nil
}

// currentOf tells which paths the commit adds or supersedes have a
// current record in the base version's file set (files, the live segments
// by ctx), for store.CheckFileRecords. It streams the merge of the live
// segments of each ctx the commit touches, as Files does: the bounded
// number of objects a run's plan reads too, nothing for a ctx with none.
func (s *Store) currentOf(ctx context.Context, c store.Commit, files map[string][]segRef) (map[[2]string]bool, error) {
	touched := map[string]map[string]bool{}
	for _, rs := range [][]store.FileRecord{c.Added, c.Superseded} {
		for _, r := range rs {
			if len(files[r.Ctx]) == 0 {
				continue
			}
			if touched[r.Ctx] == nil {
				touched[r.Ctx] = map[string]bool{}
			}
			touched[r.Ctx][r.File.Path] = true
		}
	}
	current := map[[2]string]bool{}
	for srcCtx, paths := range touched {
		last := slices.Max(slices.Collect(maps.Keys(paths)))
		for e, err := range s.mergeSegments(ctx, files[srcCtx], mergeCurrent) {
			if err != nil {
				return nil, fmt.Errorf("reading the files of source %q: %w", srcCtx, err)
			}
			if e.File.Path > last {
				break // the merge is in path order: no touched path follows
			}
			if paths[e.File.Path] {
				current[[2]string{srcCtx, e.File.Path}] = true
			}
		}
	}
	return current, nil
}
