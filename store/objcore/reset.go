package objcore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tidemark-etl/tidemark/store"
)

// Reset writes a new head version holding the bookmark as run toRunID
// committed it (or an empty one): a new version object that copies the
// target version's states and live segments (segments never change, so
// the file set is exactly the target's), made the head by one swap that
// checks the token and records every later committed run as to be marked
// undone (then marked in their records).
func (s *Store) Reset(ctx context.Context, job string, token int64, toRunID, by string) ([]store.Run, error) {
	for range 10 {
		undone, err := s.reset(ctx, job, token, toRunID, by)
		if errors.Is(err, errRebuild) {
			continue
		}
		if err != nil {
			if toRunID == "" {
				return nil, fmt.Errorf("resetting bookmark of job %q in %s: %w", job, s.root, err)
			}
			return nil, fmt.Errorf("rewinding bookmark of job %q in %s to run %s: %w", job, s.root, toRunID, err)
		}
		return undone, nil
	}
	return nil, fmt.Errorf("resetting bookmark of job %q in %s: the head kept moving", job, s.root)
}

func (s *Store) reset(ctx context.Context, job string, token int64, toRunID, by string) ([]store.Run, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	h0, _, err := s.readHead(ctx, job)
	if err != nil {
		return nil, err
	}
	if err := h0.checkToken(token); err != nil {
		return nil, err
	}
	var target store.Run // zero for a full reset: Version 0, Seq 0
	if toRunID != "" {
		r, _, err := s.readRun(ctx, job, toRunID, &h0)
		if err != nil {
			return nil, err
		}
		target = r.Run
		if err := store.CheckResetTarget(target); err != nil {
			return nil, err
		}
	}
	v := versionObj{Kind: store.VersionKind(store.KindReset, toRunID), RunID: toRunID, By: by, Prev: h0.VersionKey}
	if target.Version > 0 {
		_, tv, err := s.versionAt(ctx, job, target.Version)
		if err != nil {
			return nil, err
		}
		v.States, v.Files = tv.States, tv.Files
	}
	var undone []store.Run
	for r, err := range store.EachRun(ctx, s, job, 0, store.RunPage) {
		if err != nil {
			return nil, err
		}
		if r.Seq <= target.Seq {
			break
		}
		if store.Undoes(target, r) {
			r.Undone = true
			undone = append(undone, r)
		}
	}
	slices.Reverse(undone) // oldest first
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	v.Version, v.At = h0.Version+1, now
	key := newVersionKey(job, v.Version)
	if err := s.createJSON(ctx, key, v); err != nil {
		return nil, err
	}
	h, err := s.updateHead(ctx, job, func(h *headObj) error {
		if err := h.checkToken(token); err != nil {
			return err
		}
		if h.VersionKey != h0.VersionKey || h.Seq != h0.Seq {
			return errRebuild
		}
		h.Version, h.RunID, h.UpdatedAt, h.VersionKey = v.Version, toRunID, now, key
		for _, r := range undone {
			h.Pending = append(h.Pending, patch{RunID: r.RunID, Undone: true})
			h.Unpublished = slices.DeleteFunc(h.Unpublished, func(id string) bool { return id == r.RunID })
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_ = s.applyPending(ctx, job, h.Pending) // else the next write of the head does it
	return undone, nil
}
