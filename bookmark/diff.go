package bookmark

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// ChangeKind says how a listed file relates to the recorded state.
type ChangeKind int

// The kinds of change a diff reports.
const (
	// New is a file never recorded.
	New ChangeKind = iota
	// Modified is a recorded path whose identity changed.
	Modified
)

// Change is one listed file that a run may have to read.
type Change struct {
	Kind ChangeKind
	File File
	Old  File // the recorded version, for Modified
}

// DiffExact merges a listing and the recorded files of exact tracking, both
// in ascending byte order of Path, and calls fn for every new or modified
// file, in path order. Unchanged files cost one comparison each and nothing
// is held in memory beyond the two cursors. It returns the number of
// unchanged files. Out-of-order input is an error, never a silent miss.
func DiffExact(listing, recorded iter.Seq2[File, error], fn func(Change) error) (unchanged int64, err error) {
	next, stop := iter.Pull2(recorded)
	defer stop()
	rec, recErr, recOK := next()
	prevRec := ""
	advance := func() error {
		prevRec = rec.Path
		rec, recErr, recOK = next()
		if recOK && recErr == nil && rec.Path <= prevRec {
			return fmt.Errorf("recorded files out of order: %q after %q", rec.Path, prevRec)
		}
		return nil
	}
	prev := ""
	first := true
	for f, lerr := range listing {
		if lerr != nil {
			return unchanged, lerr
		}
		if !first && f.Path <= prev {
			return unchanged, fmt.Errorf("listing out of order: %q after %q", f.Path, prev)
		}
		first, prev = false, f.Path
		for recOK && recErr == nil && rec.Path < f.Path {
			if err := advance(); err != nil {
				return unchanged, err
			}
		}
		if recOK && recErr != nil {
			return unchanged, recErr
		}
		switch {
		case recOK && rec.Path == f.Path && rec.SameIdentity(f):
			unchanged++
		case recOK && rec.Path == f.Path:
			if err := fn(Change{Kind: Modified, File: f, Old: rec}); err != nil {
				return unchanged, err
			}
		default:
			if err := fn(Change{Kind: New, File: f}); err != nil {
				return unchanged, err
			}
		}
	}
	return unchanged, nil
}

// BandIndex is a timestamp-tracking state's band, indexed by path.
type BandIndex map[string]File

// NewBandIndex indexes a state's band by path.
func NewBandIndex(st SourceState) BandIndex {
	m := make(BandIndex, len(st.Band))
	for _, b := range st.Band {
		m[b.Path] = b
	}
	return m
}

// Selects reports whether Glue-style timestamp tracking reads f: every file
// with an mtime at or after HighWater-maxBand that is not already in the
// band. A file that appears later with an older mtime is missed: that is the
// model's known gap.
func (ix BandIndex) Selects(st SourceState, maxBand time.Duration, f File) bool {
	if f.MTime < st.HighWater-int64(maxBand) {
		return false
	}
	b, ok := ix[f.Path]
	return !ok || !b.SameIdentity(f)
}

// ClockSkew is how far clocks may disagree: a file whose mtime is more
// than ClockSkew after the listing time is from the future (Future), and
// timestamp tracking's high-water mark never moves past the listing time
// minus ClockSkew (AdvanceTimestamp).
const ClockSkew = time.Minute

// Future returns the files whose mtime is more than ClockSkew after
// listedAt, the clock of the listing that found them.
func Future(files []File, listedAt time.Time) []File {
	var out []File
	for _, f := range files {
		if f.MTime > listedAt.Add(ClockSkew).UnixNano() {
			out = append(out, f)
		}
	}
	return out
}

// AdvanceTimestamp returns the timestamp state after a run read taken,
// found by a listing at listedAt (the clock of the store's mtimes where it
// has one): the high-water mark moves to the newest mtime read, but never
// past listedAt - ClockSkew, and never back; the band keeps every file (old
// band and taken) within maxBand of it. A file from the future therefore
// stays in the band, so it is not read again, and cannot carry the mark
// past files that land after the listing. A zero listedAt sets no limit.
func AdvanceTimestamp(st SourceState, maxBand time.Duration, taken []File, listedAt time.Time) SourceState {
	hw := st.HighWater
	for _, f := range taken {
		m := f.MTime
		if !listedAt.IsZero() {
			m = min(m, listedAt.Add(-ClockSkew).UnixNano())
		}
		hw = max(hw, m)
	}
	byPath := map[string]File{}
	for _, f := range st.Band {
		byPath[f.Path] = f
	}
	for _, f := range taken {
		byPath[f.Path] = f
	}
	band := make([]File, 0, len(byPath))
	for _, f := range byPath {
		if f.MTime >= hw-int64(maxBand) {
			band = append(band, f)
		}
	}
	slices.SortFunc(band, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	st.HighWater = hw
	st.Band = band
	return st
}

// Bounds limit one run's input.
type Bounds struct {
	Files int   // 0: no limit
	Bytes int64 // 0: no limit
	// InBand caps the files whose mtime is within Band of Now (timestamp
	// tracking's max_files_in_band); 0: no limit.
	InBand int
	Band   time.Duration
	Now    time.Time
}

// OldestFirst orders files by mtime, then path.
func OldestFirst(a, b File) int {
	if c := cmp.Compare(a.MTime, b.MTime); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}

// Limit sorts candidates oldest first and returns the ones a run takes and
// the ones deferred to later runs. A run always takes at least one file
// when there is any, so it always makes progress.
func Limit(candidates []File, b Bounds) (take, deferred []File) {
	slices.SortFunc(candidates, OldestFirst)
	var bytes int64
	inBand := 0
	cut := len(candidates)
	for i, f := range candidates {
		if i > 0 {
			if b.Files > 0 && i >= b.Files {
				cut = i
				break
			}
			if b.Bytes > 0 && bytes+f.Size > b.Bytes {
				cut = i
				break
			}
			if b.InBand > 0 && f.MTime > b.Now.Add(-b.Band).UnixNano() && inBand >= b.InBand {
				cut = i
				break
			}
		}
		bytes += f.Size
		if b.InBand > 0 && f.MTime > b.Now.Add(-b.Band).UnixNano() {
			inBand++
		}
	}
	return candidates[:cut], candidates[cut:]
}
