package memory

import (
	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/store"
)

// jobState is everything the store holds about one job.
type jobState struct {
	lastToken int64        // the last fencing token handed out; outlives the lease
	lease     *store.Lease // nil when free
	versions  []version    // versions[i] is version i+1
	runs      []*runRec    // in Seq order: runs[i] has Seq i+1
	byID      map[string]*runRec
	files     []fileRec
	current   map[fileKey]int // current (not superseded) record of a path: index in files
	ranges    []rangeRec
}

// newJobState returns an empty job.
func newJobState() *jobState {
	return &jobState{byID: map[string]*runRec{}, current: map[fileKey]int{}}
}

// version is one bookmark version: its head record and source states.
type version struct {
	head   store.Head
	states map[string][]byte // ctx -> JSON bookmark.SourceState, as a backend stores it
	kind   string            // store.KindCommit, KindReset or KindRewind
	by     string            // who asked for a reset or rewind
}

// runRec is one run with its outputs and actions.
type runRec struct {
	run     store.Run
	outputs []store.Output
	actions []store.SinkAction
}

// fileKey names one path of one source ctx.
type fileKey struct{ ctx, path string }

// fileRec is one file record: added at version added by run, current while
// removed is 0.
type fileRec struct {
	ctx     string
	file    bookmark.File
	run     string
	added   int64
	removed int64
}

// rangeRec is one key range record, added at version added.
type rangeRec struct {
	rec   store.RangeRecord
	added int64
}

// head returns the job's newest version (Version 0 if none).
func (j *jobState) head(job string) store.Head {
	if len(j.versions) == 0 {
		return store.Head{Job: job}
	}
	return j.versions[len(j.versions)-1].head
}

// rebuildCurrent recomputes the index of current records.
func (j *jobState) rebuildCurrent() {
	j.current = make(map[fileKey]int, len(j.files))
	for i, f := range j.files {
		if f.removed == 0 {
			j.current[fileKey{f.ctx, f.file.Path}] = i
		}
	}
}
