package objcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// versionObj is one bookmark version, jobs/JOB/versions/VER-NONCE.json
// (VER inverted, so listing gives the newest first): immutable, created
// with If-None-Match: * before the head's swap that makes it the head. A
// write that loses the swap leaves its version behind unreferenced; the
// versions of a job are the chain from the head's VersionKey through
// Prev.
type versionObj struct {
	Version int64     `json:"version"`
	Kind    string    `json:"kind"`
	RunID   string    `json:"run_id"`
	At      time.Time `json:"at"`
	By      string    `json:"by,omitempty"`
	Prev    string    `json:"prev,omitempty"` // the previous version's key
	// States are the source states, as JSON.
	States map[string]json.RawMessage `json:"states"`
	// Files are the live segments of each source ctx, newest first: the
	// exact-tracking file set is their merge.
	Files map[string][]segRef `json:"files,omitempty"`
}

// newVersionKey names a new version object.
func newVersionKey(job string, version int64) string {
	return jobKey(job) + "versions/" + inv(version) + "-" + nonce() + ".json"
}

// readVersion reads a version object, from the cache when it was read
// before (they never change).
func (s *Store) readVersion(ctx context.Context, key string) (versionObj, error) {
	s.cacheMu.Lock()
	b, ok := s.cache[key]
	s.cacheMu.Unlock()
	if !ok {
		o, err := s.b.Get(ctx, key)
		if err != nil {
			return versionObj{}, err
		}
		b = o.Body
		s.cacheMu.Lock()
		if len(s.cache) > 1024 {
			clear(s.cache)
		}
		s.cache[key] = b
		s.cacheMu.Unlock()
	}
	var v versionObj
	if err := json.Unmarshal(b, &v); err != nil {
		return versionObj{}, fmt.Errorf("decoding %s: %w", s.url(key), err)
	}
	return v, nil
}

// headVersion returns the head and its version object (zero for a job
// at version 0 or after a full reset with nothing).
func (s *Store) headVersion(ctx context.Context, job string) (headObj, versionObj, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil || h.VersionKey == "" {
		return h, versionObj{}, err
	}
	v, err := s.readVersion(ctx, h.VersionKey)
	return h, v, err
}

// Head returns the job's newest bookmark version; Version 0 if it has none.
func (s *Store) Head(ctx context.Context, job string) (store.Head, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return store.Head{}, fmt.Errorf("reading the head of job %q in %s: %w", job, s.root, err)
	}
	return h.head(), nil
}

// SourceStates returns the source states of the job's head version.
func (s *Store) SourceStates(ctx context.Context, job string) (map[string]bookmark.SourceState, error) {
	_, v, err := s.headVersion(ctx, job)
	if err == nil {
		var states map[string]bookmark.SourceState
		if states, err = decodeStates(v.States); err == nil {
			return states, nil
		}
		err = fmt.Errorf("version %d: %w", v.Version, err)
	}
	return nil, fmt.Errorf("reading source states of job %q in %s: %w", job, s.root, err)
}

// decodeStates decodes a version's states.
func decodeStates(enc map[string]json.RawMessage) (map[string]bookmark.SourceState, error) {
	states := make(map[string]bookmark.SourceState, len(enc))
	for k, b := range enc {
		var st bookmark.SourceState
		if err := json.Unmarshal(b, &st); err != nil {
			return nil, fmt.Errorf("decoding the state of source %q: %w", k, err)
		}
		states[k] = st
	}
	return states, nil
}

// encodeStates encodes source states for a version.
func encodeStates(states map[string]bookmark.SourceState) (map[string]json.RawMessage, error) {
	enc := make(map[string]json.RawMessage, len(states))
	for k, st := range states {
		b, err := json.Marshal(st)
		if err != nil {
			return nil, fmt.Errorf("encoding the state of source %q: %w", k, err)
		}
		enc[k] = b
	}
	return enc, nil
}

// errChain means a version is not numbered as the chain from the head
// says it should be: not seen in a store this package wrote, whose
// versions are numbered without a gap; the readers then walk the whole
// chain from the head (walkAll) rather than refuse.
var errChain = errors.New("the version chain is not numbered 1 to the head's")

// walkAll yields the job's versions from the head back, through Prev,
// until fn returns false: every object, whatever its number.
func (s *Store) walkAll(ctx context.Context, job string, fn func(key string, v versionObj) bool) error {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return err
	}
	for key := h.VersionKey; key != ""; {
		v, err := s.readVersion(ctx, key)
		if err != nil {
			return err
		}
		if !fn(key, v) {
			return nil
		}
		key = v.Prev
	}
	return nil
}

// walkVersions yields the job's versions from version from (0: the
// head) back, through Prev, until fn returns false. Versions are numbered
// 1 to the head's without a gap along the chain (each one's Prev is the
// head it replaced), so it starts at from's object directly (versionKey)
// instead of walking down from the head.
func (s *Store) walkVersions(ctx context.Context, job string, from int64, fn func(key string, v versionObj) bool) error {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return err
	}
	if from <= 0 || from > h.Version {
		from = h.Version
	}
	if from < 1 {
		return nil
	}
	key, err := s.versionKey(ctx, job, &h, from)
	if err != nil {
		return err
	}
	for want := from; key != ""; want-- {
		v, err := s.readVersion(ctx, key)
		if err != nil {
			return err
		}
		if v.Version != want {
			return fmt.Errorf("%s is version %d where version %d was expected: %w", s.url(key), v.Version, want, errChain)
		}
		if !fn(key, v) {
			return nil
		}
		key = v.Prev
	}
	return nil
}

// versionKey returns the key of version n (1 <= n <= h.Version) of the
// job whose head is h: the one object of the head's chain numbered n.
// Version objects are named by their number (newVersionKey), so it lists
// the objects of number n: one is the chain's, since the chain holds each
// number once and its objects are never deleted. Where a lost swap or a
// failed import left others of the number, the chain's is the Prev of
// version n+1 (found the same way, or the head's own). Cost: a listing
// and, only where numbers are shared, a read per level up to one that is
// not.
func (s *Store) versionKey(ctx context.Context, job string, h *headObj, n int64) (string, error) {
	if n < 1 || n > h.Version {
		return "", fmt.Errorf("version %d: %w", n, store.ErrNotFound)
	}
	up, key := n, ""
	for ; key == ""; up++ {
		if up == h.Version {
			key = h.VersionKey
			break
		}
		keys, err := s.versionKeys(ctx, job, up)
		if err != nil {
			return "", err
		}
		if len(keys) == 1 {
			key = keys[0]
			break
		}
	}
	for ; up > n; up-- {
		v, err := s.readVersion(ctx, key)
		if err != nil {
			return "", err
		}
		if v.Version != up || v.Prev == "" {
			return "", fmt.Errorf("%s is version %d where version %d was expected: %w", s.url(key), v.Version, up, errChain)
		}
		key = v.Prev
	}
	return key, nil
}

// versionKeys lists the objects of version n of the job.
func (s *Store) versionKeys(ctx context.Context, job string, n int64) ([]string, error) {
	var keys []string
	prefix := jobKey(job) + "versions/" + inv(n) + "-"
	err := s.b.List(ctx, prefix, "", func(e Entry) (bool, error) {
		keys = append(keys, e.Key)
		return true, nil
	})
	return keys, err
}

// Versions returns the job's bookmark versions newest first, bounded by q:
// it reads from the version below q.Before (or the head) down, one object
// per version returned.
func (s *Store) Versions(ctx context.Context, job string, q store.VersionQuery) ([]store.Version, error) {
	var vs []store.Version
	add := func(_ string, v versionObj) bool {
		if q.Before > 0 && v.Version >= q.Before {
			return true
		}
		if q.Limit > 0 && len(vs) == q.Limit {
			return false
		}
		vs = append(vs, store.Version{Version: v.Version, Kind: v.Kind, RunID: v.RunID, At: v.At, By: v.By})
		return v.Version > 1
	}
	from := int64(0)
	if q.Before > 0 {
		if from = q.Before - 1; from < 1 {
			return nil, nil
		}
	}
	err := s.walkVersions(ctx, job, from, add)
	if errors.Is(err, errChain) {
		vs = nil
		err = s.walkAll(ctx, job, add)
	}
	if err != nil {
		return nil, fmt.Errorf("listing versions of job %q in %s: %w", job, s.root, err)
	}
	return vs, nil
}

// versionAt finds the object of one version of the job (versionKey).
func (s *Store) versionAt(ctx context.Context, job string, version int64) (string, versionObj, error) {
	h, _, err := s.readHead(ctx, job)
	if err != nil {
		return "", versionObj{}, err
	}
	if version < 1 || version > h.Version {
		return "", versionObj{}, fmt.Errorf("version %d: %w", version, store.ErrNotFound)
	}
	key, err := s.versionKey(ctx, job, &h, version)
	var v versionObj
	if err == nil {
		v, err = s.readVersion(ctx, key)
	}
	if err == nil && v.Version != version {
		err = errChain
	}
	if !errors.Is(err, errChain) {
		return key, v, err
	}
	ok := false
	err = s.walkAll(ctx, job, func(k string, o versionObj) bool {
		if o.Version == version {
			key, v, ok = k, o, true
		}
		return o.Version > version
	})
	if err == nil && !ok {
		err = fmt.Errorf("version %d: %w", version, store.ErrNotFound)
	}
	return key, v, err
}

// SourceStatesAt returns the source states of one bookmark version.
func (s *Store) SourceStatesAt(ctx context.Context, job string, version int64) (map[string]bookmark.SourceState, error) {
	_, v, err := s.versionAt(ctx, job, version)
	if err == nil {
		var states map[string]bookmark.SourceState
		if states, err = decodeStates(v.States); err == nil {
			return states, nil
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("reading source states of job %q at version %d in %s: %w", job, version, s.root, store.ErrNotFound)
	}
	return nil, fmt.Errorf("reading source states of job %q at version %d in %s: %w", job, version, s.root, err)
}
