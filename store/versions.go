package store

import "time"

// Kinds of bookmark version (Version.Kind).
const (
	// KindCommit is a version a run's commit wrote.
	KindCommit = "commit"
	// KindReset is a version a full reset wrote: an empty bookmark.
	KindReset = "reset"
	// KindRewind is a version a rewind wrote: the bookmark as the target
	// run committed it.
	KindRewind = "rewind"
)

// Version is one bookmark version in a job's history.
type Version struct {
	Version int64  `json:"version"`
	Kind    string `json:"kind"` // KindCommit, KindReset or KindRewind
	// RunID is the committing run (KindCommit), the rewind target
	// (KindRewind), or empty (KindReset).
	RunID string    `json:"run_id"`
	At    time.Time `json:"at"`
	// By names who asked for a reset or rewind (e.g. "cli alice@host");
	// empty for a commit and for versions recorded by an older tidemark.
	By string `json:"by"`
}

// VersionQuery bounds a Versions query. The zero VersionQuery asks for
// every version.
type VersionQuery struct {
	// Limit is the most versions returned; 0 means no limit.
	Limit int
	// Before returns only versions below it; 0 means from the head.
	Before int64
}

// VersionKind returns the Kind of a version a store recorded as a commit or
// a reset to runID (a reset to a run is a rewind).
func VersionKind(recorded, runID string) string {
	if recorded == KindReset && runID != "" {
		return KindRewind
	}
	return recorded
}
